// The supervisor's calls of the container runtime, against a stand-in
// runtime (a shell script that answers as podman would): a pull of a task
// that is stopped meanwhile is given up rather than waited for.
#include "agent/container_steps.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "agent/run_command.h"
#include "agent/testing/test_util.h"

namespace berth::agent {
namespace {

using testing::TempDir;

TEST(RunCommandTest, KeepsWhatTheProgramPrintedAndItsExitCode) {
  const CommandResult result =
      RunCommand({"sh", "-c", "echo out; echo err >&2; exit 3"}, std::chrono::seconds(30));
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_NE(result.output.find("out"), std::string::npos);
  EXPECT_NE(result.output.find("err"), std::string::npos);
  EXPECT_FALSE(result.given_up);
}

TEST(RunCommandTest, AProgramIsKilledWhenTheCallerGivesUp) {
  int asked = 0;
  const CommandResult result =
      RunCommand({"sleep", "600"}, std::chrono::minutes(10), [&] { return ++asked >= 2; });
  EXPECT_TRUE(result.given_up);
  EXPECT_EQ(result.exit_code, -1);
  EXPECT_EQ(asked, 2);
}

// A runtime whose images are never present and whose pull never ends.
std::string SlowRegistryRuntime(const TempDir& dir) {
  const std::string path = dir.Write("runtime",
                                     "#!/bin/sh\n"
                                     "case \"$1 $2\" in\n"
                                     "  'image exists') exit 1 ;;\n"
                                     "  'pull '*) exec sleep 600 ;;\n"
                                     "esac\n"
                                     "exit 2\n");
  ::chmod(path.c_str(), 0755);
  return path;
}

TEST(PrepareImageTest, APullOfATaskStoppedMeanwhileIsGivenUp) {
  TempDir dir;
  ContainerSpec container;
  container.runtime = {SlowRegistryRuntime(dir)};
  container.kind = "podman";
  container.image = "registry.example/train:1";
  container.pull = "missing";
  bool starting_while_pulling = false;
  int asked = 0;
  const Status status = PrepareImage(dir.path(), container, [&] {
    starting_while_pulling = std::filesystem::exists(dir.Path(task_files::kStarting));
    return ++asked >= 2;
  });
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(), "stopped while pulling image registry.example/train:1");
  EXPECT_TRUE(starting_while_pulling);
  EXPECT_FALSE(std::filesystem::exists(dir.Path(task_files::kStarting)));
}

TEST(PrepareImageTest, AMissingImageWithPullNeverIsNotPulled) {
  TempDir dir;
  ContainerSpec container;
  container.runtime = {SlowRegistryRuntime(dir)};
  container.kind = "podman";
  container.image = "train:1";
  container.pull = "never";
  const Status status = PrepareImage(dir.path(), container, [] { return false; });
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_NE(status.message().find("train:1"), std::string::npos);
}

}  // namespace
}  // namespace berth::agent
