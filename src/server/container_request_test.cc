// Issue 28: the container a submission asks for, and the host paths it may
// mount (the server's allow-list).
#include "server/container_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "server/job_request.h"
#include "server/submission_test_helpers.h"

namespace berth::server {
namespace {

using submission_test::ParseOne;
using submission_test::Rejection;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

SubmissionLimits AllowingData() {
  SubmissionLimits limits;
  limits.container_mounts.paths = {"/data", "/home/"};
  return limits;
}

TEST(ParseSubmission, ContainerWithMountsWithinTheAllowList) {
  const store::JobRequest request = ParseOne(
      R"({"command": ["python", "train.py"], "workdir": "/data/run1",
          "container": {"image": "localhost/train:1",
                        "mounts": [{"source": "/data/sets", "target": "/sets", "read_only": true},
                                   {"source": "/home/alice", "target": "/home/alice"}],
                        "workdir": "/workspace", "env": {"NCCL_DEBUG": "INFO"},
                        "entrypoint": ["/bin/sh", "-c"], "mount_home": true, "pull": "never"}})",
      AllowingData());
  ASSERT_TRUE(request.container.has_value());
  const store::ContainerRequest& container = *request.container;
  EXPECT_EQ(container.image, "localhost/train:1");
  ASSERT_EQ(container.mounts.size(), 2u);
  EXPECT_EQ(container.mounts[0], (store::ContainerMount{"/data/sets", "/sets", true}));
  EXPECT_EQ(container.mounts[1], (store::ContainerMount{"/home/alice", "/home/alice", false}));
  EXPECT_EQ(container.workdir, "/workspace");
  EXPECT_EQ(container.env.at("NCCL_DEBUG"), "INFO");
  EXPECT_THAT(container.entrypoint, ElementsAre("/bin/sh", "-c"));
  EXPECT_TRUE(container.mount_home);
  EXPECT_EQ(container.pull, "never");
  // An image alone needs no allow-list at all.
  EXPECT_TRUE(
      ParseOne(R"({"command": ["true"], "container": {"image": "img"}})").container.has_value());
}

TEST(ParseSubmission, ContainerMountOutsideTheAllowListIsRefusedNamingIt) {
  EXPECT_THAT(Rejection(R"({"command": ["true"], "container": {"image": "i",
                  "mounts": [{"source": "/etc", "target": "/etc"}]}})",
                        AllowingData()),
              ::testing::AllOf(StartsWith("container.mounts[0].source: "), HasSubstr("'/etc'"),
                               HasSubstr("/data, /home/")));
  // A prefix is a path, not a string: /database is not under /data.
  EXPECT_THAT(Rejection(R"({"command": ["true"], "container": {"image": "i",
                  "mounts": [{"source": "/database", "target": "/d"}]}})",
                        AllowingData()),
              StartsWith("container.mounts[0].source: "));
  EXPECT_THAT(Rejection(R"({"command": ["true"], "container": {"image": "i",
                  "mounts": [{"source": "/data/../etc", "target": "/d"}]}})",
                        AllowingData()),
              HasSubstr("'..'"));
  // The default allows no host path at all.
  EXPECT_THAT(Rejection(R"({"command": ["true"], "container": {"image": "i",
                  "mounts": [{"source": "/data", "target": "/d"}]}})"),
              HasSubstr("none are allowed"));
  // The job's workdir is mounted into its container: it is checked too.
  EXPECT_THAT(Rejection(R"({"command": ["true"], "workdir": "/srv/x",
                  "container": {"image": "i"}})",
                        AllowingData()),
              StartsWith("workdir: '/srv/x' is outside"));
}

TEST(ParseSubmission, ContainerFieldsAreChecked) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"container": {}})", "container.image: required"},
      {R"({"container": {"image": ""}})", "container.image: "},
      {R"({"container": "img"})", "container: expected an object"},
      {R"({"container": {"image": "i", "user": "root"}})", "container: unknown field 'user'"},
      {R"({"container": {"image": "i", "pull": "sometimes"}})", "container.pull: "},
      {R"({"container": {"image": "i", "workdir": "rel"}})", "container.workdir: "},
      {R"({"container": {"image": "i", "env": {"BERTH_X": "1"}}})", "container.env.BERTH_X: "},
      {R"({"container": {"image": "i", "mounts": [{"source": "/data"}]}})",
       "container.mounts[0].target: required"},
      {R"({"container": {"image": "i", "mounts": [{"source": "/data", "target": "/a,b"}]}})",
       "container.mounts[0].target: "},
      {R"({"container": {"image": "i", "mount_home": "yes"}})", "container.mount_home: "},
  };
  for (const auto& [container, message] : cases) {
    const std::string body = R"({"command": ["true"], )" + container.substr(1);
    EXPECT_THAT(Rejection(body, AllowingData()), StartsWith(message)) << body;
  }
}

TEST(ParseSubmission, HomeMountIsTheUsersHomeWithinTheAllowList) {
  store::ContainerRequest request;
  request.image = "i";
  request.mount_home = true;
  Result<store::ContainerRequest> home =
      WithHomeMount(request, "alice", "/home/alice", AllowingData().container_mounts);
  ASSERT_TRUE(home.ok()) << home.status().ToString();
  EXPECT_THAT(home->mounts,
              ElementsAre(store::ContainerMount{"/home/alice", "/home/alice", false}));
  EXPECT_THAT(
      WithHomeMount(request, "bob", "/u/bob", AllowingData().container_mounts).status().message(),
      StartsWith("container.mount_home: '/u/bob' is outside"));
  EXPECT_THAT(
      WithHomeMount(request, "carol", "", AllowingData().container_mounts).status().message(),
      HasSubstr("no home directory"));
}

}  // namespace
}  // namespace berth::server
