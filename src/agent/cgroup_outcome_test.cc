// What a task's cgroup says about its end.
#include "agent/cgroup_outcome.h"

#include <gtest/gtest.h>

namespace berth::agent {
namespace {

ExitStatus Ended(std::optional<int32_t> code, std::optional<int32_t> signal,
                 const std::string& reason) {
  return ExitStatus{code, signal, reason, {}};
}

TEST(CgroupOutcomeTest, AFailureAfterAnOomKillIsOutOfMemory) {
  TaskCgroup cgroup;
  cgroup.memory_mib = 64;
  const CgroupUsage oom{64 << 20, core::Duration::Millis(120), 1};
  const CgroupUsage none{1 << 20, core::Duration::Millis(5), 0};
  const struct {
    ExitStatus status;
    CgroupUsage usage;
    std::string reason;
  } cases[] = {
      {Ended(std::nullopt, 9, "exited"), oom, "out_of_memory"},  // the main process killed
      {Ended(137, std::nullopt, "exited"), oom,
       "out_of_memory"},                                    // a child killed, the shell failed
      {Ended(0, std::nullopt, "exited"), oom, "exited"},    // it coped: it succeeded
      {Ended(std::nullopt, 9, "stopped"), oom, "stopped"},  // asked to stop: that is why
      {Ended(std::nullopt, 15, "time_limit"), oom, "time_limit"},
      {Ended(std::nullopt, 9, "exited"), none, "exited"},  // killed by someone else
  };
  for (const auto& c : cases) {
    const ExitStatus judged = WithCgroupUsage(c.status, cgroup, c.usage);
    EXPECT_EQ(judged.reason, c.reason) << c.status.reason << " " << c.usage.oom_kills;
    EXPECT_EQ(judged.peak_memory_bytes, c.usage.peak_memory_bytes);
    EXPECT_EQ(judged.cpu_time, c.usage.cpu_time);
    EXPECT_EQ(judged.exit_code, c.status.exit_code);
    EXPECT_EQ(judged.signal, c.status.signal);
    if (c.reason == "out_of_memory") {
      EXPECT_EQ(judged.message, "out of memory: limit 64 MiB");
    }
  }
}

TEST(CgroupOutcomeTest, WithoutALimitOfItsOwnTheNodeRanOut) {
  const ExitStatus judged =
      WithCgroupUsage(Ended(std::nullopt, 9, "exited"), TaskCgroup{}, CgroupUsage{{}, {}, 2});
  EXPECT_EQ(judged.reason, "out_of_memory");
  EXPECT_EQ(judged.message, "out of memory: the node ran out (the task had no memory limit)");
}

}  // namespace
}  // namespace berth::agent
