// The state dir as the agent's memory: a new TaskRunner (a restarted agent)
// adopts running tasks, learns exits that happened while it was away, and
// settles tasks whose supervisor vanished.
#include "agent/task_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <climits>
#include <fstream>

#include "agent/testing/runner_fixture.h"

namespace berth::agent {
namespace {

using testing::Find;
using testing::Gone;
using ::testing::HasSubstr;
using testing::ReadPids;
using testing::RunnerOptions;
using testing::ShellTask;
using testing::Slurp;
using testing::TempDir;
using testing::WaitFor;
using testing::WaitForExit;

const TaskKey kKey{core::JobId{1}, 0, 1};

class TaskRunnerTest : public ::testing::Test {
 protected:
  std::unique_ptr<TaskRunner> Open() {
    return TaskRunner::Open(RunnerOptions(dir_.path())).value();
  }
  std::string TaskDir() const { return dir_.path() + "/tasks/" + kKey.DirName(); }

  TempDir dir_;
};

TEST_F(TaskRunnerTest, ARestartedRunnerAdoptsRunningTasks) {
  pid_t task_pid = 0;
  {
    std::unique_ptr<TaskRunner> first = Open();
    protocol::TaskAssignment task = ShellTask(1, "echo $$ > pid; exec sleep 1000");
    task.gpus = {2, 3};
    ASSERT_TRUE(first->Start(task).ok());
    ASSERT_TRUE(WaitFor([&] { return ReadPids(TaskDir() + "/work/pid").size() == 1; }));
    task_pid = ReadPids(TaskDir() + "/work/pid")[0];
  }  // the "agent" goes away; the task must not notice
  ASSERT_FALSE(Gone(task_pid));
  std::unique_ptr<TaskRunner> second = Open();
  std::optional<LocalTask> adopted = Find(*second, core::JobId{1});
  ASSERT_TRUE(adopted);
  EXPECT_EQ(adopted->phase, LocalPhase::kRunning);
  EXPECT_EQ(adopted->gpus, (std::vector<int32_t>{2, 3}));
  EXPECT_FALSE(Gone(task_pid));

  ASSERT_TRUE(second->Stop(kKey, core::Duration::Zero()).ok());
  std::optional<LocalTask> stopped = WaitForExit(*second, core::JobId{1});
  ASSERT_TRUE(stopped && stopped->exit);
  EXPECT_EQ(stopped->exit->reason, "stopped");
  EXPECT_TRUE(Gone(task_pid));
}

TEST_F(TaskRunnerTest, AnExitWhileAwayIsReportedWithItsStatus) {
  {
    std::unique_ptr<TaskRunner> first = Open();
    ASSERT_TRUE(first->Start(ShellTask(1, "while [ ! -e go ]; do sleep 0.02; done; exit 3")).ok());
    ASSERT_TRUE(WaitFor([&] { return FileExists(TaskDir() + "/supervisor.pid"); }));
  }
  std::ofstream(TaskDir() + "/work/go") << "go";
  ASSERT_TRUE(WaitFor([&] { return FileExists(TaskDir() + "/exit.json"); }));
  std::unique_ptr<TaskRunner> second = Open();
  std::optional<LocalTask> task = Find(*second, core::JobId{1});
  ASSERT_TRUE(task && task->exit);
  EXPECT_EQ(task->phase, LocalPhase::kExited);
  EXPECT_EQ(task->exit->exit_code, 3);
  EXPECT_FALSE(task->acked);
}

// Issue 30: a task says it saved a checkpoint by touching the file its
// environment names; the runner reads the file's age (not when it noticed)
// and the heartbeat carries it.
TEST_F(TaskRunnerTest, ATouchedCheckpointFileIsReportedWithItsAge) {
  std::unique_ptr<TaskRunner> runner = Open();
  ASSERT_TRUE(runner
                  ->Start(ShellTask(1,
                                    "while [ ! -e go ]; do sleep 0.02; done; "
                                    "touch -d '2 minutes ago' \"$BERTH_CHECKPOINT_FILE\"; "
                                    "touch touched; exec sleep 1000"))
                  .ok());
  ASSERT_TRUE(WaitFor([&] { return FileExists(TaskDir() + "/supervisor.pid"); }));
  runner->Refresh();
  std::optional<LocalTask> before = Find(*runner, core::JobId{1});
  ASSERT_TRUE(before);
  EXPECT_EQ(before->phase, LocalPhase::kRunning);
  EXPECT_EQ(before->checkpoint_age, std::nullopt) << "no file, no checkpoint";

  std::ofstream(TaskDir() + "/work/go") << "go";
  ASSERT_TRUE(WaitFor([&] { return FileExists(TaskDir() + "/work/touched"); }));
  runner->Refresh();
  std::optional<LocalTask> after = Find(*runner, core::JobId{1});
  ASSERT_TRUE(after && after->checkpoint_age);
  EXPECT_GE(*after->checkpoint_age, core::Duration::Seconds(119));
  EXPECT_LT(*after->checkpoint_age, core::Duration::Minutes(10));
  const protocol::Heartbeat heartbeat = BuildHeartbeat("node-1", runner->Tasks(), {}, {});
  ASSERT_EQ(heartbeat.tasks.size(), 1u);
  EXPECT_EQ(heartbeat.tasks[0].checkpoint_age, after->checkpoint_age);

  ASSERT_TRUE(runner->Stop(kKey, core::Duration::Zero()).ok());
  ASSERT_TRUE(WaitForExit(*runner, core::JobId{1}));
}

TEST_F(TaskRunnerTest, AVanishedSupervisorIsSettledAndItsTaskKilled) {
  std::unique_ptr<TaskRunner> runner = Open();
  ASSERT_TRUE(runner->Start(ShellTask(1, "echo $$ > pid; exec sleep 1000")).ok());
  ASSERT_TRUE(WaitFor([&] { return ReadPids(TaskDir() + "/work/pid").size() == 1; }));
  const pid_t task_pid = ReadPids(TaskDir() + "/work/pid")[0];
  std::optional<ProcessIdentity> supervisor =
      ProcessIdentity::Parse(Slurp(TaskDir() + "/supervisor.pid"));
  ASSERT_TRUE(supervisor);
  ASSERT_EQ(::kill(supervisor->pid, SIGKILL), 0);  // a supervisor this test started
  ASSERT_TRUE(WaitFor([&] { return !IsAlive(*supervisor); }));

  std::optional<LocalTask> task = WaitForExit(*runner, core::JobId{1});
  ASSERT_TRUE(task && task->exit);
  EXPECT_EQ(task->exit->reason, "lost");
  EXPECT_EQ(task->exit->signal, SIGKILL);
  EXPECT_TRUE(WaitFor([&] { return Gone(task_pid); }));
  EXPECT_THAT(Slurp(TaskDir() + "/log"), HasSubstr("supervisor of this task vanished"));
  // Recorded, so the next agent reads the same outcome.
  EXPECT_EQ(Find(*Open(), core::JobId{1})->exit->reason, "lost");
}

TEST_F(TaskRunnerTest, ARecycledPidIsNotMistakenForTheSupervisor) {
  // pid 1 exists, but not with this start time: the supervisor is gone.
  std::filesystem::create_directories(TaskDir());
  std::ofstream(TaskDir() + "/spec.json") << "{}";
  std::ofstream(TaskDir() + "/supervisor.pid") << ProcessIdentity{1, ULLONG_MAX, BootId()}.Format();
  std::unique_ptr<TaskRunner> runner = Open();
  std::optional<LocalTask> task = Find(*runner, core::JobId{1});
  ASSERT_TRUE(task && task->exit);
  EXPECT_EQ(task->exit->reason, "lost");
}

TEST_F(TaskRunnerTest, ATaskWhoseSupervisorNeverStartedIsForgotten) {
  std::filesystem::create_directories(TaskDir());
  std::ofstream(TaskDir() + "/spec.json") << "{}";
  std::unique_ptr<TaskRunner> runner = Open();
  EXPECT_TRUE(runner->Tasks().empty());
  EXPECT_FALSE(std::filesystem::exists(TaskDir()));
}

TEST_F(TaskRunnerTest, AcknowledgedTasksAreCollectedAfterTheirTime) {
  std::unique_ptr<TaskRunner> runner = Open();
  ASSERT_TRUE(runner->Start(ShellTask(1, "exit 0")).ok());
  ASSERT_TRUE(WaitForExit(*runner, core::JobId{1}));
  const core::Time end = Find(*runner, core::JobId{1})->exit->end_time;
  EXPECT_EQ(runner->Collect(end + core::Duration::Seconds(1)), 0);  // not acknowledged yet
  ASSERT_TRUE(runner->MarkAcked(kKey).ok());
  EXPECT_TRUE(Open()->Tasks().front().acked);  // the acknowledgement is on disk
  EXPECT_EQ(runner->Collect(end), 0);          // not old enough
  EXPECT_EQ(runner->Collect(end + core::Duration::Seconds(1)), 1);
  EXPECT_TRUE(runner->Tasks().empty());
  EXPECT_FALSE(std::filesystem::exists(TaskDir()));
}

TEST_F(TaskRunnerTest, StartingTheSameAttemptTwiceIsRefused) {
  std::unique_ptr<TaskRunner> runner = Open();
  ASSERT_TRUE(runner->Start(ShellTask(1, "exit 0")).ok());
  EXPECT_EQ(runner->Start(ShellTask(1, "exit 0")).code(), StatusCode::kAlreadyExists);
  ASSERT_TRUE(WaitForExit(*runner, core::JobId{1}));
}

TEST_F(TaskRunnerTest, ASupervisorThatCannotStartIsRecordedAsAStartFailure) {
  TaskRunnerOptions options = RunnerOptions(dir_.path());
  options.supervisor_command = {dir_.path() + "/no-such-supervisor"};
  std::unique_ptr<TaskRunner> runner = TaskRunner::Open(options).value();
  const Status started = runner->Start(ShellTask(1, "exit 0"));
  EXPECT_THAT(started.message(), HasSubstr("no-such-supervisor"));
  const std::optional<LocalTask> task = Find(*runner, core::JobId{1});
  ASSERT_TRUE(task);
  EXPECT_EQ(task->phase, LocalPhase::kExited);
  ASSERT_TRUE(task->exit);
  EXPECT_EQ(task->exit->exit_code, 127);
  EXPECT_EQ(task->exit->reason, "start_failed");
  EXPECT_TRUE(std::filesystem::exists(TaskDir() + "/" + task_files::kExit));
}

TEST_F(TaskRunnerTest, ASupervisorThatHasExitedIsReapedNotLeftAZombie) {
  std::unique_ptr<TaskRunner> runner = Open();
  ASSERT_TRUE(runner->Start(ShellTask(1, "exit 0")).ok());
  const std::optional<ProcessIdentity> supervisor =
      ProcessIdentity::Parse(Slurp(TaskDir() + "/" + task_files::kSupervisor));
  ASSERT_TRUE(supervisor);
  ASSERT_TRUE(WaitForExit(*runner, core::JobId{1}));
  EXPECT_TRUE(WaitFor([&] {
    runner->Refresh();
    const std::optional<ProcStat> stat = ReadProcStat(supervisor->pid);
    return !stat || stat->start_ticks != supervisor->start_ticks;
  }));
}

}  // namespace
}  // namespace berth::agent
