#include "agent/task_env.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

namespace berth::agent {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Not;

protocol::TaskAssignment GangTask() {
  protocol::TaskAssignment task;
  task.job = core::JobId{42};
  task.task = 1;
  task.attempt = 3;
  task.user = "alice";
  task.launch.name = "train";
  task.launch.command = {"python", "train.py"};
  task.launch.env = {{"LR", "0.1"}, {"PATH", "/opt/venv/bin:/usr/bin"}};
  task.gpus = {4, 5, 6, 7};
  task.world_size = 2;
  task.master_addr = "10.0.0.1";
  task.master_port = 23456;
  task.node_rank = 1;
  task.local_rank = 0;
  task.local_world_size = 1;
  return task;
}

TaskContext Context() {
  return TaskContext{"node-2", "/state/tasks/42-1-3", {{"PATH", "/bin"}, {"HOME", "/root"}}};
}

TEST(TaskEnvTest, GangVariablesFollowTheAssignment) {
  const std::map<std::string, std::string> env = TaskEnvironment(GangTask(), Context());
  const std::map<std::string, std::string> expected = {
      {"CUDA_VISIBLE_DEVICES", "4,5,6,7"},
      {"NVIDIA_VISIBLE_DEVICES", "4,5,6,7"},
      {"MASTER_ADDR", "10.0.0.1"},
      {"MASTER_PORT", "23456"},
      {"WORLD_SIZE", "2"},
      {"RANK", "1"},
      {"LOCAL_RANK", "0"},
      {"LOCAL_WORLD_SIZE", "1"},
      {"NODE_RANK", "1"},
      {"GROUP_RANK", "1"},
      {"BERTH_JOB_ID", "42"},
      {"BERTH_TASK", "1"},
      {"BERTH_ATTEMPT", "3"},
      {"BERTH_USER", "alice"},
      {"BERTH_JOB_NAME", "train"},
      {"BERTH_NODE", "node-2"},
      {"BERTH_GPUS", "4,5,6,7"},
      {"BERTH_TASK_DIR", "/state/tasks/42-1-3/work"},
      {"BERTH_CHECKPOINT_FILE", "/state/tasks/42-1-3/work/.berth-checkpoint"},
  };
  for (const auto& [name, value] : expected) {
    ASSERT_TRUE(env.contains(name)) << name;
    EXPECT_EQ(env.at(name), value) << name;
  }
}

// Issue 29: the array index never reached the task.
TEST(TaskEnvTest, AnArrayJobSeesItsIndexInBerthsAndSlurmsNames) {
  protocol::TaskAssignment task = GangTask();
  EXPECT_FALSE(TaskEnvironment(task, Context()).contains("SLURM_ARRAY_TASK_ID"));
  task.launch.array_job = 40;
  task.launch.array_index = 2;
  const std::map<std::string, std::string> env = TaskEnvironment(task, Context());
  EXPECT_EQ(env.at("BERTH_ARRAY_INDEX"), "2");
  EXPECT_EQ(env.at("SLURM_ARRAY_TASK_ID"), "2");
  EXPECT_EQ(env.at("BERTH_ARRAY_JOB_ID"), "40");
  EXPECT_EQ(env.at("SLURM_ARRAY_JOB_ID"), "40");
}

// Issue 29: the checkpoint-then-requeue pattern reads the restart count (a
// Slurm job as SLURM_RESTART_COUNT too: SlurmEnvTest).
TEST(TaskEnvTest, TheRestartCountIsTheRunsBeforeThisOne) {
  protocol::TaskAssignment task = GangTask();
  task.attempt = 1;
  EXPECT_EQ(TaskEnvironment(task, Context()).at("BERTH_RESTART_COUNT"), "0");
  task.attempt = 3;
  EXPECT_EQ(TaskEnvironment(task, Context()).at("BERTH_RESTART_COUNT"), "2");
}

// Issue 29: --signal reaches the supervisor as the host's signal number,
// and only with a time limit to count from.
TEST(TaskEnvTest, TheEarlySignalGoesIntoTheSpecWithItsNumber) {
  protocol::TaskAssignment task = GangTask();
  task.launch.signal = protocol::EarlySignal{"USR1", core::Duration::Seconds(90), true};
  EXPECT_EQ(BuildTaskSpec(task, Context()).early_signal, std::nullopt);
  task.launch.time_limit = core::Duration::Seconds(600);
  const TaskSpec spec = BuildTaskSpec(task, Context());
  EXPECT_EQ(spec.early_signal, (EarlySignalSpec{SIGUSR1, core::Duration::Seconds(90), true}));
  Result<TaskSpec> parsed = ParseTaskSpec(TaskSpecJson(spec));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->early_signal, spec.early_signal);
}

TEST(TaskEnvTest, TheAccountsPasswdEntryNamesHomeUserAndShell) {
  TaskContext context = Context();
  context.base_env["USER"] = "root";
  context.account = Account{"alice", 1001, 1001, {1001, 27}, "/home/alice", "/bin/bash"};
  const std::map<std::string, std::string> env = TaskEnvironment(GangTask(), context);
  EXPECT_EQ(env.at("HOME"), "/home/alice");
  EXPECT_EQ(env.at("USER"), "alice");
  EXPECT_EQ(env.at("LOGNAME"), "alice");
  EXPECT_EQ(env.at("SHELL"), "/bin/bash");
  EXPECT_EQ(env.at("PATH"), "/opt/venv/bin:/usr/bin") << "the job's own";
}

TEST(TaskEnvTest, JobEnvOverridesTheAgentsAndBerthOverridesBoth) {
  protocol::TaskAssignment task = GangTask();
  task.launch.env["RANK"] = "99";  // the server refuses BERTH_*; RANK is ours too
  const std::map<std::string, std::string> env = TaskEnvironment(task, Context());
  EXPECT_EQ(env.at("PATH"), "/opt/venv/bin:/usr/bin");
  EXPECT_EQ(env.at("HOME"), "/root");
  EXPECT_EQ(env.at("LR"), "0.1");
  EXPECT_EQ(env.at("RANK"), "1");
}

TEST(TaskEnvTest, NoGpusHidesEveryGpu) {
  protocol::TaskAssignment task = GangTask();
  task.gpus.clear();
  const std::map<std::string, std::string> env = TaskEnvironment(task, Context());
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "");
  EXPECT_EQ(env.at("NVIDIA_VISIBLE_DEVICES"), "void");
}

TEST(TaskEnvTest, OnlyListedVariablesPassThrough) {
  std::string path = "PATH=/usr/bin";
  std::string token = "BERTH_TOKEN=secret";
  std::string lang = "LC_ALL=C.UTF-8";
  std::string odd = "NOEQUALS";
  char* environ[] = {path.data(), token.data(), lang.data(), odd.data(), nullptr};
  const std::map<std::string, std::string> env = PassThroughEnvironment(environ);
  EXPECT_EQ(env, (std::map<std::string, std::string>{{"LC_ALL", "C.UTF-8"}, {"PATH", "/usr/bin"}}));
  char* empty[] = {nullptr};
  EXPECT_EQ(PassThroughEnvironment(empty).at("PATH"), "/usr/local/bin:/usr/bin:/bin");
}

TEST(TaskEnvTest, SpecRunsTheCommandOrTheScript) {
  protocol::TaskAssignment task = GangTask();
  task.launch.time_limit = core::Duration::Seconds(60);
  task.launch.grace = core::Duration::Seconds(5);
  TaskSpec spec = BuildTaskSpec(task, Context());
  EXPECT_EQ(spec.key, (TaskKey{core::JobId{42}, 1, 3}));
  EXPECT_THAT(spec.argv, ElementsAre("python", "train.py"));
  EXPECT_EQ(spec.workdir, "/state/tasks/42-1-3/work");  // none given: the task's scratch dir
  EXPECT_EQ(spec.time_limit, core::Duration::Seconds(60));
  EXPECT_EQ(spec.grace, core::Duration::Seconds(5));
  EXPECT_THAT(spec.env, Contains("CUDA_VISIBLE_DEVICES=4,5,6,7"));
  EXPECT_THAT(spec.env, Not(Contains("BERTH_TOKEN=secret")));

  task.launch.command.clear();
  task.launch.script = "echo hi\n";
  task.launch.workdir = "/data";
  spec = BuildTaskSpec(task, Context());
  EXPECT_THAT(spec.argv, ElementsAre("/bin/sh", "/state/tasks/42-1-3/script"));
  EXPECT_EQ(spec.workdir, "/data");

  task.launch.script = "#!/usr/bin/env python3\nprint('hi')\n";
  spec = BuildTaskSpec(task, Context());
  EXPECT_THAT(spec.argv, ElementsAre("/state/tasks/42-1-3/script"));
}

TEST(TaskEnvTest, SpecSurvivesItsJsonForm) {
  protocol::TaskAssignment task = GangTask();
  task.launch.time_limit = core::Duration::Millis(1500);
  TaskSpec spec = BuildTaskSpec(task, Context());
  Result<TaskSpec> parsed = ParseTaskSpec(TaskSpecJson(spec));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->key, spec.key);
  EXPECT_EQ(parsed->argv, spec.argv);
  EXPECT_EQ(parsed->env, spec.env);
  EXPECT_EQ(parsed->time_limit, spec.time_limit);
  EXPECT_EQ(parsed->gpus, spec.gpus);
  EXPECT_EQ(parsed->run_as, std::nullopt);
  spec.run_as = TaskIdentity{"alice", 1001, 100, {100, 27, 1001}};
  parsed = ParseTaskSpec(TaskSpecJson(spec));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->run_as, spec.run_as);
  EXPECT_FALSE(ParseTaskSpec("{").ok());
  EXPECT_FALSE(ParseTaskSpec("{}").ok());
}

TEST(TaskEnvTest, TheTasksCgroupHasItsJobsLimitsAndDeniesTheOtherGpus) {
  TaskCgroupConfig config;
  config.parent = CgroupDirs{CgroupVersion::kV1,
                             {{"memory", "/sys/fs/cgroup/memory/berth-tasks-1"},
                              {"cpu", "/sys/fs/cgroup/cpu/berth-tasks-1"}}};
  config.pids_max = 4096;
  for (int32_t gpu = 0; gpu < 8; ++gpu) {
    config.gpu_devices[gpu] = DeviceNumber{195, static_cast<uint32_t>(gpu)};
  }
  protocol::TaskAssignment task = GangTask();  // GPUs 4..7
  task.launch.limits = protocol::ResourceLimits{core::MilliCpu(1500), core::MemoryMiB(2048)};
  TaskContext context = Context();
  context.cgroups = &config;
  const TaskSpec spec = BuildTaskSpec(task, context);
  ASSERT_TRUE(spec.cgroup);
  EXPECT_EQ(spec.cgroup->version, CgroupVersion::kV1);
  EXPECT_EQ(spec.cgroup->dirs, (std::map<std::string, std::string>{
                                   {"cpu", "/sys/fs/cgroup/cpu/berth-tasks-1/42-1-3"},
                                   {"memory", "/sys/fs/cgroup/memory/berth-tasks-1/42-1-3"}}));
  EXPECT_EQ(spec.cgroup->memory_mib, 2048);
  EXPECT_EQ(spec.cgroup->cpu_milli, 1500);
  EXPECT_EQ(spec.cgroup->pids_max, 4096);
  EXPECT_THAT(spec.cgroup->denied_devices, ElementsAre(DeviceNumber{195, 0}, DeviceNumber{195, 1},
                                                       DeviceNumber{195, 2}, DeviceNumber{195, 3}));
  // It survives spec.json; a node without cgroups writes none.
  EXPECT_EQ(ParseTaskSpec(TaskSpecJson(spec)).value().cgroup, spec.cgroup);
  EXPECT_FALSE(BuildTaskSpec(task, Context()).cgroup);
}

TEST(TaskEnvTest, TaskKeysRoundTripThroughDirectoryNames) {
  const TaskKey key{core::JobId{12}, 0, 1};
  EXPECT_EQ(key.DirName(), "12-0-1");
  EXPECT_EQ(TaskKey::FromDirName("12-0-1"), key);
  for (const char* bad : {"", "12", "12-0", "x-0-1", "12-0-1-2", "0-0-1", "12--1-1", "12-0-"}) {
    EXPECT_FALSE(TaskKey::FromDirName(bad)) << bad;
  }
}

}  // namespace
}  // namespace berth::agent
