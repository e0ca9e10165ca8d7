#include "agent/reconcile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace berth::agent {
namespace {

using core::Duration;
using core::JobId;

protocol::TaskAssignment Want(int64_t job, int32_t task, int32_t attempt,
                              std::vector<int32_t> gpus = {0}) {
  protocol::TaskAssignment assignment;
  assignment.job = JobId{job};
  assignment.task = task;
  assignment.attempt = attempt;
  assignment.gpus = std::move(gpus);
  return assignment;
}

protocol::TaskStop StopOf(int64_t job, int32_t task, int32_t attempt, Duration grace) {
  return protocol::TaskStop{JobId{job}, task, attempt, grace};
}

LocalTask Running(int64_t job, int32_t task, int32_t attempt, std::vector<int32_t> gpus = {0}) {
  LocalTask local;
  local.key = TaskKey{JobId{job}, task, attempt};
  local.gpus = std::move(gpus);
  return local;
}

LocalTask Exited(int64_t job, int32_t task, int32_t attempt, int32_t code, bool acked = false) {
  LocalTask local = Running(job, task, attempt);
  local.phase = LocalPhase::kExited;
  local.exit = ExitStatus{code, std::nullopt, "exited", {}};
  local.acked = acked;
  return local;
}

std::vector<TaskKey> Starts(const ReconcilePlan& plan) {
  std::vector<TaskKey> keys;
  for (const auto& task : plan.start) keys.push_back(TaskKey{task.job, task.task, task.attempt});
  return keys;
}

std::vector<std::pair<TaskKey, Duration>> Stops(const ReconcilePlan& plan) {
  std::vector<std::pair<TaskKey, Duration>> out;
  for (const auto& stop : plan.stop) {
    out.emplace_back(TaskKey{stop.job, stop.task, stop.attempt}, stop.grace);
  }
  return out;
}

TaskKey Key(int64_t job, int32_t task, int32_t attempt) {
  return TaskKey{JobId{job}, task, attempt};
}

using Plan = std::pair<std::vector<TaskKey>, std::vector<std::pair<TaskKey, Duration>>>;

// Scenario table: desired state and local truth in, starts and stops out.
TEST(ReconcileTest, Scenarios) {
  const Duration zero = Duration::Zero();
  const Duration grace = Duration::Seconds(30);
  const struct {
    std::string name;
    protocol::DesiredState desired;
    std::vector<LocalTask> local;
    Plan expected;
  } cases[] = {
      {"nothing wanted, nothing here", {}, {}, {}},
      {"start what should run", {{Want(1, 0, 1)}, {}}, {}, {{Key(1, 0, 1)}, {}}},
      {"repeat: already running", {{Want(1, 0, 1)}, {}}, {Running(1, 0, 1)}, {}},
      {"repeat: already exited, never twice", {{Want(1, 0, 1)}, {}}, {Exited(1, 0, 1, 0)}, {}},
      {"a duplicated entry starts once",
       {{Want(1, 0, 1), Want(1, 0, 1)}, {}},
       {},
       {{Key(1, 0, 1)}, {}}},
      {"explicit stop with the job's grace",
       {{}, {StopOf(1, 0, 1, grace)}},
       {Running(1, 0, 1)},
       {{}, {{Key(1, 0, 1), grace}}}},
      {"a stop for a task already stopping with that grace",
       {{}, {StopOf(1, 0, 1, grace)}},
       {[] {
         LocalTask t = Running(1, 0, 1);
         t.stop_grace = Duration::Seconds(30);
         return t;
       }()},
       {}},
      {"a shorter grace stops again",
       {{}, {StopOf(1, 0, 1, zero)}},
       {[] {
         LocalTask t = Running(1, 0, 1);
         t.stop_grace = Duration::Seconds(30);
         return t;
       }()},
       {{}, {{Key(1, 0, 1), zero}}}},
      {"a stop for a task not here", {{}, {StopOf(1, 0, 1, grace)}}, {}, {}},
      {"a stop for an exited task", {{}, {StopOf(1, 0, 1, grace)}}, {Exited(1, 0, 1, 0)}, {}},
      {"fencing: running but not wanted", {}, {Running(7, 0, 1)}, {{}, {{Key(7, 0, 1), zero}}}},
      {"fencing: an older attempt stops, the new one waits",
       {{Want(7, 0, 2, {3})}, {}},
       {Running(7, 0, 1, {5})},
       {{}, {{Key(7, 0, 1), zero}}}},
      {"a start waits while an unwanted task holds its GPUs",
       {{Want(8, 0, 1, {0, 1})}, {}},
       {Running(7, 0, 1, {1, 2})},
       {{}, {{Key(7, 0, 1), zero}}}},
      {"a start on other GPUs does not wait",
       {{Want(8, 0, 1, {0, 1})}, {}},
       {Running(7, 0, 1, {2, 3})},
       {{Key(8, 0, 1)}, {{Key(7, 0, 1), zero}}}},
      {"once the holder exited, the start goes ahead",
       {{Want(8, 0, 1, {0, 1})}, {}},
       {Exited(7, 0, 1, 137)},
       {{Key(8, 0, 1)}, {}}},
      {"tasks of the same job on one node are independent",
       {{Want(9, 0, 1, {0}), Want(9, 1, 1, {1})}, {}},
       {Running(9, 0, 1, {0})},
       {{Key(9, 1, 1)}, {}}},
  };
  for (const auto& c : cases) {
    const ReconcilePlan plan = Reconcile(c.desired, c.local);
    EXPECT_EQ(Starts(plan), c.expected.first) << c.name;
    EXPECT_EQ(Stops(plan), c.expected.second) << c.name;
    // Idempotent: applying the plan and reconciling the same message again
    // asks for nothing new.
    std::vector<LocalTask> after = c.local;
    for (const auto& start : plan.start)
      after.push_back(Running(core::Value(start.job), start.task, start.attempt, start.gpus));
    for (const auto& stop : plan.stop) {
      for (LocalTask& task : after) {
        if (task.key == TaskKey{stop.job, stop.task, stop.attempt}) task.stop_grace = stop.grace;
      }
    }
    const ReconcilePlan again = Reconcile(c.desired, after);
    EXPECT_TRUE(again.start.empty()) << c.name;
    EXPECT_TRUE(again.stop.empty()) << c.name;
  }
}

TEST(ReconcileTest, HeartbeatCarriesRunningAndUnacknowledgedExits) {
  LocalTask signalled = Exited(3, 0, 1, 0);
  signalled.exit = ExitStatus{std::nullopt,
                              9,
                              "out_of_memory",
                              {},
                              "out of memory: limit 64 MiB",
                              (64 << 20) - 4096,
                              core::Duration::Micros(1'250'001)};
  LocalTask unknown_reason = Exited(4, 0, 1, 1);
  unknown_reason.exit->reason = "a newer word";
  const std::vector<LocalTask> local = {Running(1, 0, 1), Exited(2, 0, 1, 3),
                                        Exited(2, 1, 1, 0, /*acked=*/true), signalled,
                                        unknown_reason};
  GpuInventoryInfo inventory;
  inventory.gpus = {GpuInfo{0, "", "", 0, 0, true}, GpuInfo{1, "", "", 0, 1, true}};
  const std::vector<GpuSample> samples = {GpuSample{0, true, "", 0, 0, 0},
                                          GpuSample{1, false, "ECC", 0, 0, 0}};
  const protocol::Heartbeat heartbeat = BuildHeartbeat("node-1", local, inventory, samples);
  EXPECT_EQ(heartbeat.node, "node-1");
  ASSERT_EQ(heartbeat.tasks.size(), 4u);
  EXPECT_EQ(heartbeat.tasks[0].phase, protocol::TaskPhase::kRunning);
  EXPECT_EQ(heartbeat.tasks[1].phase, protocol::TaskPhase::kExited);
  EXPECT_EQ(heartbeat.tasks[1].exit_code, 3);
  EXPECT_EQ(heartbeat.tasks[1].outcome, protocol::TaskOutcome::kExited);
  EXPECT_EQ(heartbeat.tasks[2].signal, 9);
  EXPECT_FALSE(heartbeat.tasks[2].exit_code);
  EXPECT_EQ(heartbeat.tasks[2].outcome, protocol::TaskOutcome::kOutOfMemory);
  EXPECT_EQ(heartbeat.tasks[2].message, "out of memory: limit 64 MiB");
  EXPECT_EQ(heartbeat.tasks[2].peak_memory, core::MemoryMiB(64));  // rounded up
  EXPECT_EQ(heartbeat.tasks[2].cpu_time, core::Duration::Micros(1'250'001));
  EXPECT_FALSE(heartbeat.tasks[1].peak_memory);  // no cgroup, no measurement
  EXPECT_FALSE(heartbeat.tasks[1].cpu_time);
  EXPECT_EQ(heartbeat.tasks[3].outcome, protocol::TaskOutcome::kExited);
  ASSERT_EQ(heartbeat.gpus.size(), 2u);
  EXPECT_TRUE(heartbeat.gpus[0].healthy);
  EXPECT_FALSE(heartbeat.gpus[1].healthy);
  EXPECT_EQ(heartbeat.gpus[1].interconnect_group, 1);
}

TEST(ReconcileTest, ExitsAreAcknowledgedUnlessTheServerStillWantsThem) {
  protocol::Heartbeat sent;
  sent.tasks = {protocol::TaskReport{JobId{1}, 0, 1, protocol::TaskPhase::kExited, 0, std::nullopt},
                protocol::TaskReport{JobId{2}, 0, 1, protocol::TaskPhase::kExited, 1, std::nullopt},
                protocol::TaskReport{JobId{3}, 0, 1, protocol::TaskPhase::kRunning, std::nullopt,
                                     std::nullopt}};
  // The server lost job 2's exit (it restarted) and lists it to run again.
  protocol::DesiredState reply{{Want(2, 0, 1), Want(3, 0, 1)}, {}};
  EXPECT_THAT(AcknowledgedExits(sent, reply), ::testing::ElementsAre(Key(1, 0, 1)));
}

}  // namespace
}  // namespace berth::agent
