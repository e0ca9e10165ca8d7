// The supervisor, through the task runner that starts it: real processes,
// real signals, exit statuses read back from the state dir.
#include "agent/supervisor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "agent/node_lease.h"
#include "agent/testing/runner_fixture.h"

namespace berth::agent {
namespace {

using testing::Gone;
using ::testing::HasSubstr;
using testing::ReadPids;
using testing::RunnerOptions;
using testing::ShellTask;
using testing::Slurp;
using testing::TempDir;
using testing::WaitFor;
using testing::WaitForExit;

class SupervisorTest : public ::testing::Test {
 protected:
  void SetUp() override { runner_ = TaskRunner::Open(RunnerOptions(dir_.path())).value(); }
  std::string TaskDir(int64_t job) const {
    return runner_->tasks_dir() + "/" + TaskKey{core::JobId{job}, 0, 1}.DirName();
  }

  TempDir dir_;
  std::unique_ptr<TaskRunner> runner_;
};

TEST_F(SupervisorTest, RecordsExitCodeAndCapturesOutput) {
  ASSERT_TRUE(runner_->Start(ShellTask(1, "echo to-stdout; echo to-stderr >&2; exit 3")).ok());
  std::optional<LocalTask> task = WaitForExit(*runner_, core::JobId{1});
  ASSERT_TRUE(task && task->exit);
  EXPECT_EQ(task->exit->exit_code, 3);
  EXPECT_FALSE(task->exit->signal);
  EXPECT_EQ(task->exit->reason, "exited");
  const std::string log = Slurp(TaskDir(1) + "/log");
  EXPECT_THAT(log, HasSubstr("to-stdout\n"));
  EXPECT_THAT(log, HasSubstr("to-stderr\n"));
}

TEST_F(SupervisorTest, ACommandThatCannotRunIsAStartFailureSayingWhy) {
  protocol::TaskAssignment assignment = ShellTask(1, "");
  assignment.launch.script.clear();
  assignment.launch.command = {"berth-no-such-program", "--flag"};
  ASSERT_TRUE(runner_->Start(assignment).ok());
  std::optional<LocalTask> task = WaitForExit(*runner_, core::JobId{1});
  ASSERT_TRUE(task && task->exit);
  EXPECT_EQ(task->exit->exit_code, 127);
  EXPECT_EQ(task->exit->reason, "start_failed");
  EXPECT_EQ(task->exit->message, "cannot run berth-no-such-program: No such file or directory");
}

TEST_F(SupervisorTest, RecordsTheSignalThatKilledTheTask) {
  ASSERT_TRUE(runner_->Start(ShellTask(1, "kill -KILL $$")).ok());
  std::optional<LocalTask> task = WaitForExit(*runner_, core::JobId{1});
  ASSERT_TRUE(task && task->exit);
  EXPECT_EQ(task->exit->signal, SIGKILL);
  EXPECT_FALSE(task->exit->exit_code);
}

TEST_F(SupervisorTest, StopSendsTermThenKillsTheWholeTreeAfterGrace) {
  // The main process traps SIGTERM and carries on; a child ignores it; a
  // grandchild moves to a session of its own; a daemon double-forks (its
  // parent exits, so it is reparented: to the supervisor, the subreaper).
  const std::string script = R"sh(
trap 'echo main got TERM' TERM
echo $$ >> pids
(trap '' TERM; exec sleep 1000) &
echo $! >> pids
setsid sh -c 'trap "" TERM; echo $$ >> pids; exec sleep 1000' &
sh -c '(trap "" TERM; exec sleep 1000) & echo $! >> pids' &
while [ "$(wc -l < pids)" -lt 4 ]; do sleep 0.01; done
echo ready > ready
while true; do sleep 0.05; done
)sh";
  ASSERT_TRUE(runner_->Start(ShellTask(1, script, core::Duration::Millis(400))).ok());
  const std::string dir = TaskDir(1);
  ASSERT_TRUE(WaitFor([&] { return testing::Slurp(dir + "/work/ready") == "ready\n"; }));
  const std::vector<pid_t> pids = ReadPids(dir + "/work/pids");
  ASSERT_EQ(pids.size(), 4u);
  for (pid_t pid : pids) ASSERT_FALSE(Gone(pid)) << pid;

  const auto stop = std::chrono::steady_clock::now();
  ASSERT_TRUE(runner_->Stop(TaskKey{core::JobId{1}, 0, 1}, core::Duration::Millis(400)).ok());
  std::optional<LocalTask> task = WaitForExit(*runner_, core::JobId{1});
  const auto took = std::chrono::steady_clock::now() - stop;
  ASSERT_TRUE(task && task->exit);
  EXPECT_EQ(task->exit->signal, SIGKILL);  // it ignored SIGTERM: killed after the grace
  EXPECT_EQ(task->exit->reason, "stopped");
  EXPECT_GE(took, std::chrono::milliseconds(400));
  EXPECT_THAT(Slurp(dir + "/log"), HasSubstr("main got TERM"));
  EXPECT_THAT(Slurp(dir + "/log"), HasSubstr("stop requested"));
  // exit.json is written only once nothing is left.
  for (pid_t pid : pids) EXPECT_TRUE(Gone(pid)) << "pid " << pid << " survived";
}

// Issue 29: the task's main process is in its process group and in the
// supervisor's session; a stop signalled both, so a SIGTERM handler ran
// twice. It runs once, and the exit code it chooses is the task's.
TEST_F(SupervisorTest, AStopSendsTheTaskOneSigterm) {
  const std::string script = R"sh(
exec python3 -c '
import signal, sys, time
got = []
def term(number, frame):
    got.append(time.monotonic())
    with open("terms", "a") as f:
        f.write("TERM\n")
signal.signal(signal.SIGTERM, term)
open("ready", "w").write("ready\n")
while not got or time.monotonic() < got[0] + 1.0:
    time.sleep(0.01)
sys.exit(7)
'
)sh";
  ASSERT_TRUE(runner_->Start(ShellTask(1, script, core::Duration::Seconds(30))).ok());
  const std::string dir = TaskDir(1);
  ASSERT_TRUE(WaitFor([&] { return testing::Slurp(dir + "/work/ready") == "ready\n"; }));
  ASSERT_TRUE(runner_->Stop(TaskKey{core::JobId{1}, 0, 1}, core::Duration::Seconds(30)).ok());
  std::optional<LocalTask> task = WaitForExit(*runner_, core::JobId{1});
  ASSERT_TRUE(task && task->exit);
  EXPECT_EQ(task->exit->reason, "stopped");
  EXPECT_EQ(task->exit->exit_code, 7);
  EXPECT_EQ(Slurp(dir + "/work/terms"), "TERM\n");
}

TEST_F(SupervisorTest, WhatTheTaskLeavesBehindIsStoppedWhenItExits) {
  ASSERT_TRUE(runner_->Start(ShellTask(1, "sleep 1000 & echo $! > leftover; exit 0")).ok());
  std::optional<LocalTask> task = WaitForExit(*runner_, core::JobId{1});
  ASSERT_TRUE(task && task->exit);
  EXPECT_EQ(task->exit->exit_code, 0);
  const std::vector<pid_t> pids = ReadPids(TaskDir(1) + "/work/leftover");
  ASSERT_EQ(pids.size(), 1u);
  EXPECT_TRUE(Gone(pids[0]));
}

TEST_F(SupervisorTest, TimeLimitIsEnforced) {
  protocol::TaskAssignment assignment =
      ShellTask(1, "exec sleep 1000", core::Duration::Millis(200));
  assignment.launch.time_limit = core::Duration::Millis(300);
  ASSERT_TRUE(runner_->Start(assignment).ok());
  std::optional<LocalTask> task = WaitForExit(*runner_, core::JobId{1});
  ASSERT_TRUE(task && task->exit);
  EXPECT_EQ(task->exit->reason, "time_limit");
  EXPECT_EQ(task->exit->message, "time limit of 0.3 s reached");
  EXPECT_EQ(task->exit->signal, SIGTERM);
  EXPECT_THAT(Slurp(TaskDir(1) + "/log"), HasSubstr("time limit"));
}

// Issue 29: --signal=B:USR1@2 with a 3 s limit: the batch shell's trap runs
// once, then the limit stops the task as always.
TEST_F(SupervisorTest, TheEarlySignalReachesTheTrapBeforeTheTimeLimit) {
  protocol::TaskAssignment assignment =
      ShellTask(1, "trap 'echo usr1 >> marks' USR1\ntouch ready\nwhile true; do sleep 0.05; done\n",
                core::Duration::Millis(200));
  assignment.launch.time_limit = core::Duration::Seconds(3);
  assignment.launch.signal = protocol::EarlySignal{"USR1", core::Duration::Seconds(2), true};
  ASSERT_TRUE(runner_->Start(assignment).ok());
  std::optional<LocalTask> task = WaitForExit(*runner_, core::JobId{1});
  ASSERT_TRUE(task && task->exit);
  EXPECT_EQ(task->exit->reason, "time_limit");
  EXPECT_EQ(Slurp(TaskDir(1) + "/work/marks"), "usr1\n");
  EXPECT_THAT(Slurp(TaskDir(1) + "/log"), HasSubstr("time limit in 2 s: sending signal"));
}

// Issue 29: scancel --signal. The agent hands the server's whole list on
// every heartbeat; each id reaches the task once.
TEST_F(SupervisorTest, RequestedSignalsAreDeliveredOnceEach) {
  ASSERT_TRUE(
      runner_
          ->Start(ShellTask(1,
                            "trap 'echo usr1 >> marks' USR1\ntrap 'echo usr2 >> marks' USR2\n"
                            "touch ready\n"
                            "while true; do sleep 0.05; done\n",
                            core::Duration::Millis(200)))
          .ok());
  const std::string dir = TaskDir(1);
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(dir + "/work/ready"); }));
  const TaskKey key{core::JobId{1}, 0, 1};
  const protocol::SignalRequest first{7, "USR1", false};
  ASSERT_TRUE(runner_->Signal(key, {first}).ok());
  ASSERT_TRUE(WaitFor([&] { return Slurp(dir + "/work/marks") == "usr1\n"; }));
  ASSERT_TRUE(runner_->Signal(key, {first}).ok());  // the next heartbeat, the same list
  ASSERT_TRUE(runner_->Signal(key, {first, protocol::SignalRequest{9, "USR2", true}}).ok());
  ASSERT_TRUE(WaitFor([&] { return Slurp(dir + "/work/marks") == "usr1\nusr2\n"; }));
  ASSERT_TRUE(runner_->Stop(key, core::Duration::Millis(200)).ok());
  std::optional<LocalTask> task = WaitForExit(*runner_, core::JobId{1});
  ASSERT_TRUE(task && task->exit);
  EXPECT_EQ(Slurp(dir + "/work/marks"), "usr1\nusr2\n");
}

TEST_F(SupervisorTest, RunsCommandsScriptsAndShebangsWithTheTaskEnvironment) {
  protocol::TaskAssignment command = ShellTask(1, "");
  command.launch.command = {"sh", "-c", "echo \"gpus=$CUDA_VISIBLE_DEVICES rank=$RANK\"; pwd"};
  command.launch.workdir = dir_.path();
  command.gpus = {2, 3};
  ASSERT_TRUE(runner_->Start(command).ok());
  protocol::TaskAssignment shebang =
      ShellTask(2, "#!/bin/sh\necho \"shebang job $BERTH_JOB_ID\"\n");
  ASSERT_TRUE(runner_->Start(shebang).ok());
  ASSERT_TRUE(WaitForExit(*runner_, core::JobId{1}));
  ASSERT_TRUE(WaitForExit(*runner_, core::JobId{2}));
  EXPECT_EQ(Slurp(TaskDir(1) + "/log"), "gpus=2,3 rank=0\n" + dir_.path() + "\n");
  EXPECT_EQ(Slurp(TaskDir(2) + "/log"), "shebang job 2\n");
}

TEST_F(SupervisorTest, AMissingProgramExitsWith127) {
  protocol::TaskAssignment task = ShellTask(1, "");
  task.launch.command = {"/nonexistent/program"};
  ASSERT_TRUE(runner_->Start(task).ok());
  std::optional<LocalTask> done = WaitForExit(*runner_, core::JobId{1});
  ASSERT_TRUE(done && done->exit);
  EXPECT_EQ(done->exit->exit_code, 127);
  EXPECT_THAT(Slurp(TaskDir(1) + "/log"), HasSubstr("cannot run /nonexistent/program"));
}

TEST_F(SupervisorTest, AStopRightAfterTheStartIsNotLost) {
  ASSERT_TRUE(runner_->Start(ShellTask(1, "exec sleep 1000")).ok());
  ASSERT_TRUE(runner_->Stop(TaskKey{core::JobId{1}, 0, 1}, core::Duration::Zero()).ok());
  std::optional<LocalTask> task = WaitForExit(*runner_, core::JobId{1});
  ASSERT_TRUE(task && task->exit);
  EXPECT_EQ(task->exit->reason, "stopped");
  EXPECT_TRUE(task->exit->signal);
}

// Issue 28: a task whose image is still being pulled when it is stopped
// (a cancel) ends then, without waiting for the pull (which may take an
// hour), and never starts.
TEST_F(SupervisorTest, AStopDuringAnImagePullEndsThePull) {
  const std::string runtime = dir_.Write("runtime",
                                         "#!/bin/sh\n"
                                         "case \"$1 $2\" in\n"
                                         "  'image exists') exit 1 ;;\n"
                                         "  'pull '*) exec sleep 600 ;;\n"
                                         "esac\n"
                                         "exit 2\n");
  ASSERT_EQ(::chmod(runtime.c_str(), 0755), 0);
  TaskRunnerOptions options = RunnerOptions(dir_.Path("state"));
  options.containers = ContainerRuntime{};
  options.containers->command = {runtime};
  std::unique_ptr<TaskRunner> runner = TaskRunner::Open(options).value();
  protocol::TaskAssignment assignment = ShellTask(1, "echo ran");
  assignment.launch.container = protocol::Container{};
  assignment.launch.container->image = "registry.example/train:1";
  ASSERT_TRUE(runner->Start(assignment).ok());
  const std::string task_dir = runner->tasks_dir() + "/" + TaskKey{core::JobId{1}, 0, 1}.DirName();
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(task_dir + "/starting"); }));
  ASSERT_TRUE(runner->Stop(TaskKey{core::JobId{1}, 0, 1}, core::Duration::Zero()).ok());
  std::optional<LocalTask> task = WaitForExit(*runner, core::JobId{1});
  ASSERT_TRUE(task && task->exit);
  EXPECT_EQ(task->exit->reason, "start_failed");
  EXPECT_THAT(task->exit->message,
              HasSubstr("stopped while pulling image registry.example/train:1"));
  EXPECT_THAT(Slurp(task_dir + "/log"), ::testing::Not(HasSubstr("ran")));
}

// Issue 32: a supervisor stops its task on its own once the node's lease
// (STATE/lease, node_lease.h) has ended, as when its agent was killed and
// nobody renews it: by then the server may run the job elsewhere.
TEST_F(SupervisorTest, ATaskWhoseNodeLeaseEndedIsStoppedByItsSupervisorAlone) {
  const std::string lease = LeasePath(dir_.path());
  ASSERT_TRUE(
      WriteLeaseEnd(lease, std::chrono::steady_clock::now() + std::chrono::seconds(60)).ok());
  // It ignores SIGTERM: only the kill after the (short) grace ends it. The
  // lease is shortened only once the trap is set, since a loaded machine
  // (CI under ASan) can take longer than a short lease to start the shell.
  ASSERT_TRUE(runner_
                  ->Start(ShellTask(1, "trap '' TERM; touch ready; while true; do sleep 0.05; done",
                                    core::Duration::Millis(200)))
                  .ok());
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(TaskDir(1) + "/work/ready"); }));
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(WriteLeaseEnd(lease, start + std::chrono::milliseconds(500)).ok());
  // Not before the lease ends.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  runner_->Refresh();
  ASSERT_EQ(testing::Find(*runner_, core::JobId{1})->phase, LocalPhase::kRunning);

  std::optional<LocalTask> task = WaitForExit(*runner_, core::JobId{1});
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(task && task->exit);
  EXPECT_EQ(task->exit->reason, "lease_expired");
  EXPECT_THAT(task->exit->message, HasSubstr("node lease expired"));
  EXPECT_EQ(task->exit->signal, SIGKILL);
  EXPECT_GE(took, std::chrono::milliseconds(500 + 200));
  // Within what the node promises (protocol::kLeaseStopWithin), with room
  // for a loaded machine.
  EXPECT_LT(took, std::chrono::milliseconds(500 + 8000));
  EXPECT_THAT(Slurp(TaskDir(1) + "/log"), HasSubstr("node lease expired"));
}

// A lease renewed in time (the agent writes a later end) keeps the task
// running; a node with no lease file (a server that grants none) never
// stops its tasks for it.
TEST_F(SupervisorTest, ARenewedLeaseKeepsTheTaskRunning) {
  const std::string lease = LeasePath(dir_.path());
  ASSERT_TRUE(
      WriteLeaseEnd(lease, std::chrono::steady_clock::now() + std::chrono::milliseconds(600)).ok());
  ASSERT_TRUE(runner_->Start(ShellTask(1, "exec sleep 1000")).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_TRUE(
      WriteLeaseEnd(lease, std::chrono::steady_clock::now() + std::chrono::seconds(60)).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  runner_->Refresh();
  EXPECT_EQ(testing::Find(*runner_, core::JobId{1})->phase, LocalPhase::kRunning);
  ASSERT_TRUE(RemoveLease(lease).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  runner_->Refresh();
  EXPECT_EQ(testing::Find(*runner_, core::JobId{1})->phase, LocalPhase::kRunning);

  ASSERT_TRUE(runner_->Stop(TaskKey{core::JobId{1}, 0, 1}, core::Duration::Zero()).ok());
  std::optional<LocalTask> task = WaitForExit(*runner_, core::JobId{1});
  ASSERT_TRUE(task && task->exit);
  EXPECT_EQ(task->exit->reason, "stopped");
}

// The lease file holds a CLOCK_MONOTONIC reading of this boot; one of
// another boot (a reboot) is no lease.
TEST(NodeLeaseTest, TheFileRoundTripsAndAnotherBootsIsNoLease) {
  TempDir dir;
  const std::string path = LeasePath(dir.path());
  EXPECT_FALSE(ReadLeaseEnd(path));
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  ASSERT_TRUE(WriteLeaseEnd(path, end).ok());
  EXPECT_EQ(ReadLeaseEnd(path), end);
  ASSERT_TRUE(WriteFileAtomic(path, "123 another-boot\n").ok());
  EXPECT_FALSE(ReadLeaseEnd(path));
  ASSERT_TRUE(RemoveLease(path).ok());
  ASSERT_TRUE(RemoveLease(path).ok());  // gone already: fine
  EXPECT_FALSE(ReadLeaseEnd(path));
}

}  // namespace
}  // namespace berth::agent

namespace berth::agent {
namespace {

// Issue 29: a running task's supervisor runs the step tasks handed to it,
// in the task's environment with the step's over it, output to their own
// file, and reports each end; a cancelled one is stopped.
TEST_F(SupervisorTest, RunsTheStepTasksHandedToItsTask) {
  ASSERT_TRUE(runner_->Start(ShellTask(7, "export FROM_TASK=yes; exec sleep 30")).ok());
  const TaskKey key{core::JobId{7}, 0, 1};
  ASSERT_TRUE(WaitFor([&] {
    runner_->Refresh();
    return FileExists(TaskDir(7) + "/" + task_files::kTask);
  }));
  std::vector<protocol::StepLaunch> steps = {
      protocol::StepLaunch{
          0,
          1,
          {"sh", "-c", "echo rank $SLURM_PROCID gpus $CUDA_VISIBLE_DEVICES; exit 4"},
          {{"SLURM_PROCID", "1"}},
          false},
      protocol::StepLaunch{1, 0, {"sleep", "30"}, {}, false}};
  ASSERT_TRUE(runner_->DeliverSteps(key, steps).ok());
  ASSERT_TRUE(WaitFor([&] { return runner_->StepExits().size() == 1; }));
  std::vector<protocol::StepTaskReport> exits = runner_->StepExits();
  EXPECT_EQ(exits[0].step, 0);
  EXPECT_EQ(exits[0].rank, 1);
  EXPECT_EQ(exits[0].exit_code, 4);
  EXPECT_EQ(Slurp(TaskDir(7) + "/steps/0.1.out"), "rank 1 gpus 0\n");
  // The second is cancelled: it ends by SIGTERM; the task runs on.
  steps[1].cancel = true;
  ASSERT_TRUE(runner_->DeliverSteps(key, steps).ok());
  ASSERT_TRUE(WaitFor([&] { return runner_->StepExits().size() == 2; }));
  exits = runner_->StepExits();
  EXPECT_EQ(exits[1].step, 1);
  EXPECT_EQ(exits[1].signal, SIGTERM);
  runner_->Refresh();
  EXPECT_EQ(testing::Find(*runner_, core::JobId{7})->phase, LocalPhase::kRunning);
  ASSERT_TRUE(runner_->Stop(key, core::Duration::Seconds(1)).ok());
  EXPECT_TRUE(WaitForExit(*runner_, core::JobId{7}).has_value());
}

}  // namespace
}  // namespace berth::agent
