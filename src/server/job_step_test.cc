#include "server/job_step.h"

#include <gtest/gtest.h>

namespace berth::server {
namespace {

const std::vector<StepHost> kHosts = {{"sim1", 0}, {"sim2", 4}, {"sim3", 8}};

// "node:local" per rank.
std::vector<std::string> Shape(const std::vector<StepTask>& tasks) {
  std::vector<std::string> out;
  for (const StepTask& task : tasks) {
    out.push_back(task.node + ":" + std::to_string(task.local_id) + "@" +
                  std::to_string(task.job_task));
  }
  return out;
}

TEST(LayOutStepTest, DefaultsToOneTaskOnEachNode) {
  Result<std::vector<StepTask>> tasks = LayOutStep(kHosts, StepRequest{{"x"}, {}, {}, {}, {}});
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  EXPECT_EQ(Shape(*tasks), (std::vector<std::string>{"sim1:0@0", "sim2:0@4", "sim3:0@8"}));
  EXPECT_EQ((*tasks)[2].rank, 2);
  EXPECT_EQ((*tasks)[2].node_index, 2);
}

TEST(LayOutStepTest, BlockDistributionGivesTheFirstNodesTheRemainder) {
  // As Slurm's srun -n 5 over 2 nodes: ranks 0-2 on the first, 3-4 on the second.
  Result<std::vector<StepTask>> tasks = LayOutStep(kHosts, StepRequest{{"x"}, {}, 5, 2, {}});
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  EXPECT_EQ(Shape(*tasks),
            (std::vector<std::string>{"sim1:0@0", "sim1:1@0", "sim1:2@0", "sim2:0@4", "sim2:1@4"}));
}

TEST(LayOutStepTest, FewerTasksThanNodesUseFewerNodes) {
  Result<std::vector<StepTask>> tasks = LayOutStep(kHosts, StepRequest{{"x"}, {}, 2, {}, {}});
  ASSERT_TRUE(tasks.ok());
  EXPECT_EQ(Shape(*tasks), (std::vector<std::string>{"sim1:0@0", "sim2:0@4"}));
}

TEST(LayOutStepTest, TasksPerNodeFillNodesInOrder) {
  Result<std::vector<StepTask>> tasks = LayOutStep(kHosts, StepRequest{{"x"}, {}, {}, 2, 2});
  ASSERT_TRUE(tasks.ok());
  EXPECT_EQ(Shape(*tasks),
            (std::vector<std::string>{"sim1:0@0", "sim1:1@0", "sim2:0@4", "sim2:1@4"}));
}

TEST(LayOutStepTest, RefusesWhatTheJobCannotHold) {
  EXPECT_EQ(LayOutStep(kHosts, StepRequest{{"x"}, {}, {}, 4, {}}).status().message(),
            "nodes: the job has 3 nodes, not 4");
  EXPECT_EQ(LayOutStep(kHosts, StepRequest{{"x"}, {}, 1, 2, {}}).status().message(),
            "ntasks: 1 tasks cannot use 2 nodes (at least one task per node)");
  EXPECT_EQ(LayOutStep(kHosts, StepRequest{{"x"}, {}, 5, 2, 2}).status().message(),
            "ntasks: 5 tasks do not fit 2 nodes at 2 per node");
}

TEST(StepTaskEnvironmentTest, SlurmAndTorchNamesOfTheTaskInItsStep) {
  JobStep step;
  step.id = 3;
  step.nodes = {"sim1", "sim2"};
  step.env = {{"LR", "0.1"}, {"SLURM_PROCID", "from the caller"}};
  Result<std::vector<StepTask>> tasks =
      LayOutStep({{"sim1", 0}, {"sim2", 1}}, StepRequest{{"x"}, {}, 3, {}, {}});
  ASSERT_TRUE(tasks.ok());
  step.tasks = *tasks;
  const std::map<std::string, std::string> env =
      StepTaskEnvironment(core::JobId{42}, step, step.tasks[2]);
  EXPECT_EQ(env.at("LR"), "0.1");
  EXPECT_EQ(env.at("SLURM_PROCID"), "2");
  EXPECT_EQ(env.at("SLURM_LOCALID"), "0");
  EXPECT_EQ(env.at("SLURM_NODEID"), "1");
  EXPECT_EQ(env.at("SLURMD_NODENAME"), "sim2");
  EXPECT_EQ(env.at("SLURM_STEP_ID"), "3");
  EXPECT_EQ(env.at("SLURM_STEP_NUM_TASKS"), "3");
  EXPECT_EQ(env.at("SLURM_STEP_NUM_NODES"), "2");
  EXPECT_EQ(env.at("SLURM_STEP_NODELIST"), "sim[1-2]");
  EXPECT_EQ(env.at("SLURM_STEP_TASKS_PER_NODE"), "2,1");
  EXPECT_EQ(env.at("SLURM_JOB_ID"), "42");
  EXPECT_EQ(env.at("RANK"), "2");
  EXPECT_EQ(env.at("WORLD_SIZE"), "3");
  EXPECT_EQ(env.at("LOCAL_RANK"), "0");
  EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "1");
}

TEST(StepExitCodeTest, TheHighestOfItsTasksOnceAllEnded) {
  JobStep step;
  step.tasks.resize(3);
  EXPECT_EQ(StepStateName(step), "running");
  EXPECT_EQ(StepExitCode(step), std::nullopt);
  step.tasks[0].exit_code = 0;
  step.tasks[1].exit_code = 2;
  EXPECT_EQ(StepExitCode(step), std::nullopt);
  step.tasks[2].signal = 9;
  EXPECT_EQ(StepExitCode(step), 137);
  EXPECT_EQ(StepStateName(step), "failed");
  step.tasks[1].exit_code = 0;
  step.tasks[2].signal.reset();
  step.tasks[2].exit_code = 0;
  EXPECT_EQ(StepStateName(step), "completed");
  step.cancelled = true;
  EXPECT_EQ(StepStateName(step), "cancelled");
}

}  // namespace
}  // namespace berth::server
