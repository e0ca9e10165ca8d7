// The job record's fields land where the node reads them.
#include "server/task_launch.h"

#include <gtest/gtest.h>

namespace berth::server {
namespace {

TEST(TaskLaunchTest, ANodeGetsWhatTheJobAskedToRun) {
  store::JobRecord job;
  job.id = core::JobId{7};
  job.user = "alice";
  job.request.name = "train";
  job.request.command = {"python", "train.py"};
  job.request.env = {{"LR", "0.1"}};
  job.request.workdir = "/data/alice";
  job.request.time_limit = core::Duration::Hours(2);
  job.request.grace = core::Duration::Seconds(10);
  job.request.task =
      core::TaskShape{core::WholeGpus(4), core::MilliCpu(16000), core::MemoryMiB(131072)};
  job.request.queue = "research";  // the node needs none of these
  job.request.priority = 5;
  job.request.retries = 2;

  const protocol::TaskLaunch launch = TaskLaunchFor(job, 0);

  EXPECT_EQ(launch.name, "train");
  EXPECT_EQ(launch.command, job.request.command);
  EXPECT_EQ(launch.script, "");
  EXPECT_EQ(launch.env, job.request.env);
  EXPECT_EQ(launch.workdir, "/data/alice");
  EXPECT_EQ(launch.time_limit, core::Duration::Hours(2));
  EXPECT_EQ(launch.grace, core::Duration::Seconds(10));
  EXPECT_EQ(launch.run_as.user, "alice");
  EXPECT_EQ(launch.limits.cpu, core::MilliCpu(16000));
  EXPECT_EQ(launch.limits.memory, core::MemoryMiB(131072));
  EXPECT_FALSE(launch.container.has_value());
  EXPECT_FALSE(launch.slurm.has_value());  // not a Slurm job
}

// Issue 29: a Slurm job's tasks learn its nodes and Slurm layout.
TEST(TaskLaunchTest, ASlurmJobCarriesItsNodesAndLayout) {
  store::JobRecord job;
  job.user = "carol";
  job.request.script = "#!/bin/sh\nsrun hostname\n";
  job.request.tasks = 2;
  job.request.distinct_nodes = true;
  job.request.slurm_tasks_per_node = {4, 4};
  job.placement = {{"sim1", {0, 1, 2, 3}}, {"sim2", {0, 1, 2, 3}}};

  const protocol::TaskLaunch launch = TaskLaunchFor(job, 0);

  ASSERT_TRUE(launch.slurm.has_value());
  EXPECT_EQ(launch.slurm->nodes, (std::vector<std::string>{"sim1", "sim2"}));
  EXPECT_EQ(launch.slurm->tasks_per_node, (std::vector<int32_t>{4, 4}));
  EXPECT_EQ(launch.slurm->partition, "default");
  EXPECT_EQ(launch.slurm->cluster, "berth");
}

TEST(TaskLaunchTest, TasksThatShareANodeAreEachASlurmTask) {
  // srun -n 3 outside a job: one Slurm task per Berth task, two on sim1.
  store::JobRecord job;
  job.request.tasks = 3;
  job.request.slurm_tasks_per_node = {1, 1, 1};
  job.placement = {{"sim1", {0}}, {"sim1", {1}}, {"sim2", {0}}};
  const protocol::TaskLaunch launch = TaskLaunchFor(job, 1);
  ASSERT_TRUE(launch.slurm.has_value());
  EXPECT_EQ(launch.slurm->nodes, (std::vector<std::string>{"sim1", "sim2"}));
  EXPECT_EQ(launch.slurm->tasks_per_node, (std::vector<int32_t>{2, 1}));
}

TEST(TaskLaunchTest, EachTaskOfUnevenTasksIsLimitedToItsOwnShape) {
  store::JobRecord job;
  job.user = "carol";
  job.request.tasks = 2;
  job.request.distinct_nodes = true;
  job.request.task_shapes = {
      core::TaskShape{core::WholeGpus(5), core::MilliCpu(2000), core::MemoryMiB(122880)},
      core::TaskShape{core::WholeGpus(1), core::MilliCpu(1000), core::MemoryMiB(24576)}};
  job.request.task = core::LargestShape(job.request.task_shapes);

  EXPECT_EQ(TaskLaunchFor(job, 0).limits.cpu, core::MilliCpu(2000));
  EXPECT_EQ(TaskLaunchFor(job, 0).limits.memory, core::MemoryMiB(122880));
  EXPECT_EQ(TaskLaunchFor(job, 1).limits.cpu, core::MilliCpu(1000));
  EXPECT_EQ(TaskLaunchFor(job, 1).limits.memory, core::MemoryMiB(24576));
}

TEST(TaskLaunchTest, AScriptJobWithoutATimeLimit) {
  store::JobRecord job;
  job.user = "bob";
  job.request.script = "#!/bin/sh\necho hi\n";
  job.request.command.clear();
  job.request.time_limit.reset();

  const protocol::TaskLaunch launch = TaskLaunchFor(job, 0);

  EXPECT_EQ(launch.script, job.request.script);
  EXPECT_TRUE(launch.command.empty());
  EXPECT_FALSE(launch.time_limit.has_value());
  EXPECT_EQ(launch.limits, protocol::ResourceLimits{});
}

}  // namespace
}  // namespace berth::server
