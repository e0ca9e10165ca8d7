// A Slurm job's batch process sees the variables a real Slurm 22.05 gave
// the same job (tests/data/slurm/golden/NAME.txt, `== batch`).
#include "agent/slurm_env.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "agent/task_env.h"

namespace berth::agent {
namespace {

std::map<std::string, std::string> GoldenBatch(const std::string& name) {
  std::ifstream in(std::string(BERTH_SOURCE_DIR) + "/tests/data/slurm/golden/" + name + ".txt");
  EXPECT_TRUE(in.good()) << name;
  std::map<std::string, std::string> env;
  bool batch = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("== ", 0) == 0) {
      batch = line == "== batch";
    } else if (const size_t eq = line.find('='); batch && eq != std::string::npos) {
      env[line.substr(0, eq)] = line.substr(eq + 1);
    }
  }
  return env;
}

// Slurm variables Berth does not set: process-group and topology details
// no job tool reads.
const std::set<std::string> kNotSet = {"SLURM_GTIDS", "SLURM_NODE_ALIASES", "SLURM_PRIO_PROCESS",
                                       "SLURM_TOPOLOGY_ADDR_PATTERN"};

// Task 0 of `--nodes=2 --ntasks-per-node=4 --gpus-per-node=4` as the server
// launches it, with the env sbatch put in the job (SubmissionBody).
protocol::TaskAssignment Ddp4x2Batch() {
  protocol::TaskAssignment task;
  task.job = core::JobId{77};
  task.task = 0;
  task.attempt = 1;
  task.user = "root";
  task.launch.name = "ddp_4x2";
  task.launch.script = "#!/bin/sh\n";
  task.launch.env = {{"SLURM_NTASKS", "8"},
                     {"SLURM_NPROCS", "8"},
                     {"SLURM_NTASKS_PER_NODE", "4"},
                     {"SLURM_GPUS_PER_NODE", "4"}};
  task.launch.limits.cpu = core::MilliCpu(4000);
  task.launch.slurm = protocol::SlurmAllocation{{"sim1", "sim2"}, {4, 4}, "gpu", "benchcl"};
  task.gpus = {0, 1, 2, 3};
  task.world_size = 2;
  task.node_rank = 0;
  return task;
}

TEST(SlurmEnvTest, TheBatchProcessSeesWhatSlurmsDid) {
  const std::map<std::string, std::string> golden = GoldenBatch("ddp_4x2");
  ASSERT_FALSE(golden.empty());
  const std::map<std::string, std::string> env =
      TaskEnvironment(Ddp4x2Batch(), TaskContext{"sim1", "/state/tasks/77-0-1", {}});
  for (const auto& [name, value] : golden) {
    if (kNotSet.contains(name)) continue;
    ASSERT_TRUE(env.contains(name)) << name;
    EXPECT_EQ(env.at(name), value) << name;
  }
  // Those the golden file leaves out because they vary from run to run.
  EXPECT_EQ(env.at("SLURM_JOB_ID"), "77");
  EXPECT_EQ(env.at("SLURM_JOBID"), "77");
  EXPECT_EQ(env.at("SLURM_RESTART_COUNT"), "0");
  EXPECT_EQ(env.at("SLURMD_NODENAME"), "sim1");
}

TEST(SlurmEnvTest, TheOtherNodesTaskIsThatNodesFirstSlurmTask) {
  protocol::TaskAssignment task = Ddp4x2Batch();
  task.task = 1;
  task.node_rank = 1;
  task.attempt = 3;  // requeued twice
  std::map<std::string, std::string> env;
  AddSlurmEnvironment(task, "sim2", env);
  EXPECT_EQ(env.at("SLURM_NODEID"), "1");
  EXPECT_EQ(env.at("SLURM_PROCID"), "4");
  EXPECT_EQ(env.at("SLURM_LOCALID"), "0");
  EXPECT_EQ(env.at("SLURM_RESTART_COUNT"), "2");
  EXPECT_EQ(env.at("SLURMD_NODENAME"), "sim2");
}

TEST(SlurmEnvTest, ALoneNodeWithoutGpusHasNoGpuVariables) {
  protocol::TaskAssignment task = Ddp4x2Batch();
  task.gpus.clear();
  task.launch.limits.cpu = core::MilliCpu(0);
  task.launch.slurm = protocol::SlurmAllocation{{"gpu-a"}, {2}, "default", "berth"};
  std::map<std::string, std::string> env;
  AddSlurmEnvironment(task, "gpu-a", env);
  EXPECT_FALSE(env.contains("SLURM_GPUS_ON_NODE"));
  EXPECT_FALSE(env.contains("SLURM_JOB_GPUS"));
  EXPECT_EQ(env.at("SLURM_JOB_NODELIST"), "gpu-a");
  EXPECT_EQ(env.at("SLURM_CPUS_ON_NODE"), "2");  // a CPU per Slurm task at least
  EXPECT_EQ(env.at("SLURM_TASKS_PER_NODE"), "2");
}

TEST(SlurmEnvTest, AJobGivenNoTaskCountListsTheTasksItsCpusHold) {
  // The golden option sets without -n or --ntasks-per-node: Slurm's batch
  // SLURM_TASKS_PER_NODE counts the CPUs each node got (32 for
  // `-N 1 --exclusive`), and no SLURM_NTASKS is set; Berth's job is one
  // Slurm task per node (as their srun steps run).
  for (const std::string name : {"cpus_per_gpu", "exclusive_node", "gpus_job_two_nodes", "gpus_odd",
                                 "gres_two_nodes", "mem_per_gpu"}) {
    SCOPED_TRACE(name);
    const std::map<std::string, std::string> golden = GoldenBatch(name);
    ASSERT_FALSE(golden.contains("SLURM_NTASKS"));
    const size_t nodes = std::stoul(golden.at("SLURM_NNODES"));
    protocol::TaskAssignment task = Ddp4x2Batch();
    task.launch.env.clear();
    task.launch.limits.cpu = core::MilliCpu(std::stoll(golden.at("SLURM_CPUS_ON_NODE")) * 1000);
    std::vector<std::string> names;
    for (size_t node = 1; node <= nodes; ++node) names.push_back("sim" + std::to_string(node));
    task.launch.slurm =
        protocol::SlurmAllocation{names, std::vector<int32_t>(nodes, 1), "gpu", "benchcl"};
    std::map<std::string, std::string> env;
    AddSlurmEnvironment(task, "sim1", env);
    EXPECT_EQ(env.at("SLURM_TASKS_PER_NODE"), golden.at("SLURM_TASKS_PER_NODE"));
    EXPECT_EQ(env.at("SLURM_JOB_CPUS_PER_NODE"), golden.at("SLURM_JOB_CPUS_PER_NODE"));
    EXPECT_FALSE(env.contains("SLURM_NTASKS"));
  }
}

TEST(SlurmEnvTest, WithCpusPerTaskTheCpusHoldFewerTasks) {
  // -N 2 --exclusive -c 3 on 32-CPU nodes: 64 / 3 = 21 tasks, 11 + 10.
  protocol::TaskAssignment task = Ddp4x2Batch();
  task.launch.env = {{"SLURM_CPUS_PER_TASK", "3"}};
  task.launch.limits.cpu = core::MilliCpu(32000);
  task.launch.slurm = protocol::SlurmAllocation{{"sim1", "sim2"}, {1, 1}, "gpu", "benchcl"};
  std::map<std::string, std::string> env;
  AddSlurmEnvironment(task, "sim1", env);
  EXPECT_EQ(env.at("SLURM_TASKS_PER_NODE"), "11,10");
  // The batch step is still the first Slurm task of node 0.
  EXPECT_EQ(env.at("SLURM_PROCID"), "0");
}

TEST(SlurmEnvTest, NodesOfDifferentSharesEachCountTheirOwnCpus) {
  // -N 2 --gpus=6 --cpus-per-gpu=2: 5 + 1 GPUs, so 10 + 2 CPUs.
  protocol::TaskAssignment task = Ddp4x2Batch();
  task.launch.env.clear();
  task.launch.limits.cpu = core::MilliCpu(10000);
  task.launch.slurm =
      protocol::SlurmAllocation{{"sim1", "sim2"}, {1, 1}, "gpu", "benchcl", {10, 2}};
  std::map<std::string, std::string> env;
  AddSlurmEnvironment(task, "sim1", env);
  EXPECT_EQ(env.at("SLURM_CPUS_ON_NODE"), "10");
  EXPECT_EQ(env.at("SLURM_JOB_CPUS_PER_NODE"), "10,2");
  EXPECT_EQ(env.at("SLURM_TASKS_PER_NODE"), "10,2");
}

TEST(SlurmEnvTest, BerthTasksThatShareANodeAreEachASlurmTask) {
  // srun -n 3 outside a job: two tasks on sim1, one on sim2.
  protocol::TaskAssignment task = Ddp4x2Batch();
  task.launch.env = {{"SLURM_NTASKS", "3"}};
  task.launch.slurm = protocol::SlurmAllocation{{"sim1", "sim2"}, {2, 1}, "gpu", "benchcl"};
  task.node_rank = 0;
  task.local_rank = 1;
  std::map<std::string, std::string> env;
  AddSlurmEnvironment(task, "sim1", env);
  EXPECT_EQ(env.at("SLURM_PROCID"), "1");
  EXPECT_EQ(env.at("SLURM_LOCALID"), "1");
  EXPECT_EQ(env.at("SLURM_NODEID"), "0");
  task.node_rank = 1;
  task.local_rank = 0;
  env.clear();
  AddSlurmEnvironment(task, "sim2", env);
  EXPECT_EQ(env.at("SLURM_PROCID"), "2");
  EXPECT_EQ(env.at("SLURM_TASKS_PER_NODE"), "2,1");
}

TEST(SlurmEnvTest, AJobThatIsNotASlurmJobGetsNone) {
  protocol::TaskAssignment task = Ddp4x2Batch();
  task.launch.slurm.reset();
  task.launch.env.clear();
  const std::map<std::string, std::string> env =
      TaskEnvironment(task, TaskContext{"sim1", "/state/tasks/77-0-1", {}});
  for (const auto& [name, value] : env) EXPECT_NE(name.rfind("SLURM", 0), 0u) << name;
}

}  // namespace
}  // namespace berth::agent
