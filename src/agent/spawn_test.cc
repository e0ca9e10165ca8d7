// SpawnDetached: what the started process inherits (session, descriptors,
// signals), how a failed start is reported, and reaping.
#include "agent/spawn.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "agent/proc.h"
#include "agent/testing/test_util.h"

namespace berth::agent {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::TempDir;
using testing::WaitFor;

uint64_t StatusMask(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(field + ":"))
      return std::stoull(line.substr(field.size() + 1), nullptr, 16);
  }
  ADD_FAILURE() << field << " not in /proc/" << pid << "/status";
  return 0;
}

uint64_t Bit(int signal_number) { return uint64_t{1} << (signal_number - 1); }

TEST(SpawnTest, TheChildGetsItsOwnSessionTheLogAndOnlyTheStandardDescriptors) {
  TempDir dir;
  const std::string log = dir.path() + "/log";
  int leaked[2];  // not close-on-exec: must not reach the child all the same
  ASSERT_EQ(::pipe(leaked), 0);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction previous {};
  ::sigaction(SIGUSR2, &ignore, &previous);  // an ignored signal survives exec unless reset

  Result<pid_t> pid = SpawnDetached({{"/bin/sleep", "30"}, log});
  ::sigaction(SIGUSR2, &previous, nullptr);
  ::close(leaked[0]);
  ::close(leaked[1]);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();

  const std::optional<ProcStat> stat = ReadProcStat(*pid);
  ASSERT_TRUE(stat);
  EXPECT_EQ(stat->session, *pid);
  EXPECT_EQ(stat->pgrp, *pid);
  EXPECT_EQ(stat->ppid, ::getpid());

  // Polled: sleep opens and closes files of its own (the locale) as it
  // starts; an inherited descriptor would stay.
  const std::string fd_dir = "/proc/" + std::to_string(*pid) + "/fd";
  std::set<std::string> fds;
  EXPECT_TRUE(WaitFor(
      [&] {
        fds.clear();
        for (const fs::directory_entry& entry : fs::directory_iterator(fd_dir)) {
          fds.insert(entry.path().filename().string());
        }
        return fds == std::set<std::string>{"0", "1", "2"};
      },
      std::chrono::seconds(5)))
      << "descriptors: " << ::testing::PrintToString(fds);
  EXPECT_EQ(fs::read_symlink(fd_dir + "/0"), "/dev/null");
  EXPECT_EQ(fs::read_symlink(fd_dir + "/1"), log);
  EXPECT_EQ(fs::read_symlink(fd_dir + "/2"), log);

  EXPECT_EQ(StatusMask(*pid, "SigBlk"), Bit(SIGHUP) | Bit(SIGINT) | Bit(SIGTERM) | Bit(SIGCHLD));
  EXPECT_EQ(StatusMask(*pid, "SigIgn") & Bit(SIGUSR2), 0U);

  EXPECT_FALSE(ReapIfExited(*pid));
  ::kill(*pid, SIGTERM);  // blocked: stays pending
  EXPECT_FALSE(ReapIfExited(*pid));
  ::kill(*pid, SIGKILL);
  EXPECT_TRUE(WaitFor([&] { return ReapIfExited(*pid); }));
  const std::optional<ProcStat> after = ReadProcStat(*pid);
  EXPECT_FALSE(after && after->start_ticks == stat->start_ticks) << "still there: not reaped";
}

TEST(SpawnTest, AProgramThatCannotBeStartedIsAnErrorNamingIt) {
  TempDir dir;
  Result<pid_t> missing = SpawnDetached({{dir.path() + "/no-such-binary"}, dir.path() + "/log"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(missing.status().message(), HasSubstr("no-such-binary"));
  EXPECT_THAT(missing.status().message(), HasSubstr("No such file"));

  Result<pid_t> no_log = SpawnDetached({{"/bin/true"}, dir.path() + "/no-such-dir/log"});
  ASSERT_FALSE(no_log.ok());
  EXPECT_THAT(no_log.status().message(), HasSubstr("no-such-dir/log"));

  EXPECT_EQ(SpawnDetached({{}, dir.path() + "/log"}).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace berth::agent
