// Tasks fenced by real cgroups (issue 27, item 3): the task runner and its
// supervisors with limits, on this host's cgroups (v1 on a hybrid host such
// as CI's; v2 where the test process has a delegated cgroup of its own).
// Needs root; skipped, saying why, where cgroups cannot be created.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <thread>

#include "agent/cgroup_files.h"
#include "agent/cgroup_setup.h"
#include "agent/task_cgroup.h"
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

bool Exists(const std::string& path) { return std::filesystem::exists(path); }

class CgroupEnforcementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to create cgroups (CI runs as root)";
    Result<CgroupDirs> parent = SetUpTaskCgroups(dir_.path());
    if (!parent.ok()) GTEST_SKIP() << "no cgroups to use here: " << parent.status().message();
    config_.parent = *parent;
    config_.pids_max = 512;
  }
  // Nothing outlives the test, even when it failed half-way: whatever runs
  // in a task's cgroup is killed, the cgroups removed.
  void TearDown() override {
    std::set<std::string> tasks;
    for (const auto& [controller, dir] : config_.parent.dirs) {
      std::error_code error;
      for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
        if (entry.is_directory()) tasks.insert(entry.path().filename().string());
      }
    }
    for (const std::string& task : tasks) {
      TaskCgroup cgroup;
      cgroup.version = config_.parent.version;
      for (const auto& [controller, dir] : config_.parent.dirs) {
        cgroup.dirs[controller] = dir + "/" + task;
      }
      KillCgroup(cgroup);
      (void)RemoveTaskCgroup(cgroup);
    }
    RemoveTaskParentIfEmpty(config_.parent);
  }

  std::unique_ptr<TaskRunner> Open() {
    TaskRunnerOptions options = RunnerOptions(dir_.path());
    options.cgroups = config_;
    return TaskRunner::Open(options).value();
  }
  std::string TaskDir(int64_t job) const {
    return dir_.path() + "/tasks/" + TaskKey{core::JobId{job}, 0, 1}.DirName();
  }
  // The task's cgroup, as its spec.json names it.
  TaskCgroup CgroupOf(int64_t job) const {
    return ParseTaskSpec(Slurp(TaskDir(job) + "/spec.json")).value().cgroup.value();
  }
  static bool Removed(const TaskCgroup& cgroup) {
    const std::vector<std::string> dirs = cgroup.Directories();
    return !dirs.empty() && std::none_of(dirs.begin(), dirs.end(), Exists);
  }

  TempDir dir_;
  TaskCgroupConfig config_;
};

TEST_F(CgroupEnforcementTest, AJobOverItsMemoryEndsOutOfMemoryWithTheLimit) {
  std::unique_ptr<TaskRunner> runner = Open();
  protocol::TaskAssignment task = ShellTask(1, "");
  task.launch.command = {"python3", "-c", "b = bytearray(200 * 2**20); print('survived')"};
  task.launch.limits.memory = core::MemoryMiB(64);
  ASSERT_TRUE(runner->Start(task).ok());
  const std::optional<LocalTask> done = WaitForExit(*runner, core::JobId{1});
  ASSERT_TRUE(done && done->exit);
  EXPECT_EQ(done->exit->reason, "out_of_memory");
  EXPECT_EQ(done->exit->message, "out of memory: limit 64 MiB");
  EXPECT_EQ(done->exit->signal, SIGKILL);
  ASSERT_TRUE(done->exit->peak_memory_bytes);
  EXPECT_GT(*done->exit->peak_memory_bytes, 8 << 20);
  EXPECT_LE(*done->exit->peak_memory_bytes, 64 << 20);
  EXPECT_THAT(Slurp(TaskDir(1) + "/log"), HasSubstr("berth: out of memory: limit 64 MiB"));
  EXPECT_THAT(Slurp(TaskDir(1) + "/log"), ::testing::Not(HasSubstr("survived")));
  EXPECT_TRUE(Removed(CgroupOf(1)));
}

TEST_F(CgroupEnforcementTest, ABusyLoopWithHalfACpuGetsAtMostHalfACpu) {
  std::unique_ptr<TaskRunner> runner = Open();
  protocol::TaskAssignment task = ShellTask(1, "exec sh -c 'while :; do :; done'");
  task.launch.limits.cpu = core::MilliCpu(500);
  ASSERT_TRUE(runner->Start(task).ok());
  ASSERT_TRUE(WaitFor([&] { return FileExists(TaskDir(1) + "/task.pid"); }));
  const TaskCgroup cgroup = CgroupOf(1);
  ASSERT_TRUE(WaitFor([&] { return ReadCgroupUsage(cgroup).cpu_time.has_value(); }));
  // A measurement over a window, not a wait for an event.
  const auto window = std::chrono::milliseconds(2500);
  const core::Duration before = *ReadCgroupUsage(cgroup).cpu_time;
  const auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(window);
  const core::Duration used = *ReadCgroupUsage(cgroup).cpu_time - before;
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpus = static_cast<double>(used.micros()) / 1e6 / wall;
  EXPECT_LE(cpus, 0.6) << "the quota held it to 0.5 CPU";
  EXPECT_GE(cpus, 0.1) << "it ran at all (a busy 2-core machine still gives it that)";

  ASSERT_TRUE(runner->Stop(TaskKey{core::JobId{1}, 0, 1}, core::Duration::Zero()).ok());
  const std::optional<LocalTask> done = WaitForExit(*runner, core::JobId{1});
  ASSERT_TRUE(done && done->exit);
  EXPECT_EQ(done->exit->reason, "stopped");
  ASSERT_TRUE(done->exit->cpu_time);  // recorded with the run
  EXPECT_GE(*done->exit->cpu_time, used);
  EXPECT_TRUE(Removed(cgroup));
}

TEST_F(CgroupEnforcementTest, ATaskCannotOpenTheGpuDevicesOfOtherTasks) {
  // Stand-in GPU device files with the numbers of /dev/full and /dev/random:
  // harmless devices, distinct from each other and from what a shell needs.
  TempDir devices;
  ASSERT_EQ(::mknod((devices.path() + "/gpu0").c_str(), S_IFCHR | 0666, makedev(1, 7)), 0);
  ASSERT_EQ(::mknod((devices.path() + "/gpu1").c_str(), S_IFCHR | 0666, makedev(1, 8)), 0);
  config_.gpu_devices = {{0, DeviceNumber{1, 7}}, {1, DeviceNumber{1, 8}}};
  std::unique_ptr<TaskRunner> runner = Open();
  const std::string probe = "for g in 0 1; do if (: < " + devices.path() +
                            "/gpu$g); then echo gpu$g=opened; else echo gpu$g=refused; fi; done";
  protocol::TaskAssignment first = ShellTask(1, probe);
  first.gpus = {0};
  protocol::TaskAssignment second = ShellTask(2, probe);
  second.gpus = {1};
  ASSERT_TRUE(runner->Start(first).ok());
  ASSERT_TRUE(runner->Start(second).ok());
  ASSERT_TRUE(WaitForExit(*runner, core::JobId{1}));
  ASSERT_TRUE(WaitForExit(*runner, core::JobId{2}));
  const std::string first_log = Slurp(TaskDir(1) + "/log");
  EXPECT_THAT(first_log, HasSubstr("gpu0=opened\n"));
  EXPECT_THAT(first_log, HasSubstr("gpu1=refused\n"));
  EXPECT_THAT(first_log, HasSubstr("gpu1: Operation not permitted"));
  const std::string second_log = Slurp(TaskDir(2) + "/log");
  EXPECT_THAT(second_log, HasSubstr("gpu0=refused\n"));
  EXPECT_THAT(second_log, HasSubstr("gpu1=opened\n"));
  EXPECT_TRUE(Removed(CgroupOf(1)));
  EXPECT_TRUE(Removed(CgroupOf(2)));
}

TEST_F(CgroupEnforcementTest, ARestartedRunnerAdoptsTheTaskWithItsLimits) {
  pid_t task_pid = 0;
  {
    std::unique_ptr<TaskRunner> first = Open();
    protocol::TaskAssignment task = ShellTask(1, "echo $$ > pid; exec sleep 1000");
    task.launch.limits.memory = core::MemoryMiB(64);
    task.launch.limits.cpu = core::MilliCpu(500);
    ASSERT_TRUE(first->Start(task).ok());
    ASSERT_TRUE(WaitFor([&] { return ReadPids(TaskDir(1) + "/work/pid").size() == 1; }));
    task_pid = ReadPids(TaskDir(1) + "/work/pid")[0];
  }  // the agent goes away
  // ... and starts again: it sets up its cgroups as at any start.
  ASSERT_TRUE(SetUpTaskCgroups(dir_.path()).ok());
  std::unique_ptr<TaskRunner> second = Open();
  ASSERT_EQ(testing::Find(*second, core::JobId{1})->phase, LocalPhase::kRunning);
  const TaskCgroup cgroup = CgroupOf(1);
  const std::string memory = cgroup.dirs.at("memory");
  const std::string cpu = cgroup.dirs.at("cpu");
  if (cgroup.version == CgroupVersion::kV1) {
    EXPECT_EQ(ReadCgroupNumber(memory, "memory.limit_in_bytes"), 64 << 20);
    EXPECT_EQ(ReadCgroupNumber(cpu, "cpu.cfs_quota_us"), 50'000);
  } else {
    EXPECT_EQ(ReadCgroupNumber(memory, "memory.max"), 64 << 20);
    EXPECT_EQ(ReadCgroupFile(cpu, "cpu.max"), "50000 100000\n");
  }
  EXPECT_EQ(ReadCgroupNumber(cgroup.dirs.at("pids"), "pids.max"), 512);
  EXPECT_EQ(ReadCgroupProcs(memory), std::vector<pid_t>{task_pid});

  ASSERT_TRUE(second->Stop(TaskKey{core::JobId{1}, 0, 1}, core::Duration::Zero()).ok());
  ASSERT_TRUE(WaitForExit(*second, core::JobId{1}));
  EXPECT_TRUE(Gone(task_pid));
  EXPECT_TRUE(Removed(cgroup));
}

TEST_F(CgroupEnforcementTest, ALostSupervisorsCgroupIsEmptiedAndRemoved) {
  // What left the task's session is out of reach of the process walk, not
  // of its cgroup.
  std::unique_ptr<TaskRunner> runner = Open();
  ASSERT_TRUE(
      runner->Start(ShellTask(1, "setsid sleep 1000 & echo $! > escaped; exec sleep 1000")).ok());
  ASSERT_TRUE(WaitFor([&] { return ReadPids(TaskDir(1) + "/work/escaped").size() == 1; }));
  const pid_t escaped = ReadPids(TaskDir(1) + "/work/escaped")[0];
  ASSERT_TRUE(WaitFor([&] { return ReadProcStat(escaped)->session == escaped; }));
  const std::optional<ProcessIdentity> supervisor =
      ProcessIdentity::Parse(Slurp(TaskDir(1) + "/supervisor.pid"));
  ASSERT_TRUE(supervisor);
  ASSERT_EQ(::kill(supervisor->pid, SIGKILL), 0);  // a supervisor this test started

  const std::optional<LocalTask> done = WaitForExit(*runner, core::JobId{1});
  ASSERT_TRUE(done && done->exit);
  EXPECT_EQ(done->exit->reason, "lost");
  EXPECT_TRUE(WaitFor([&] { return Gone(escaped); }));
  EXPECT_TRUE(Removed(CgroupOf(1)));
}

TEST_F(CgroupEnforcementTest, TheParentGoesOnlyWhenNoTaskIsLeftInIt) {
  std::unique_ptr<TaskRunner> runner = Open();
  ASSERT_TRUE(runner->Start(ShellTask(1, "exec sleep 1000")).ok());
  ASSERT_TRUE(WaitFor([&] { return FileExists(TaskDir(1) + "/task.pid"); }));
  RemoveTaskParentIfEmpty(config_.parent);  // an agent that leaves its tasks running
  for (const auto& [controller, dir] : config_.parent.dirs) EXPECT_TRUE(Exists(dir)) << dir;
  ASSERT_TRUE(runner->Stop(TaskKey{core::JobId{1}, 0, 1}, core::Duration::Zero()).ok());
  ASSERT_TRUE(WaitForExit(*runner, core::JobId{1}));
  RemoveTaskParentIfEmpty(config_.parent);  // one that stopped them
  for (const auto& [controller, dir] : config_.parent.dirs) EXPECT_FALSE(Exists(dir)) << dir;
}

}  // namespace
}  // namespace berth::agent
