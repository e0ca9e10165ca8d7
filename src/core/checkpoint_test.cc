// The work a preemption loses (issue 30, item 2): since the last periodic or
// reported checkpoint of the current run.
#include "core/checkpoint.h"

#include <gtest/gtest.h>

#include "core/cluster_state.h"
#include "core/test_builders.h"

namespace berth::core {
namespace {

using testing::At;
using testing::NewJob;
using testing::Secs;

Job Running(const JobSpec& spec, Time started) {
  Job job;
  job.spec = spec;
  job.state = JobState::kRunning;
  job.started = started;
  return job;
}

TEST(CheckpointTest, WithoutCheckpointsTheWholeRunIsLost) {
  const Job job = Running(NewJob(1), At(100));
  EXPECT_EQ(LastCheckpoint(job, At(4100)), At(100));
  EXPECT_EQ(LossIfStopped(job, At(4100)), Secs(4000));
}

// The simulator's default (saved at the instant of a preemption): the core
// sees the loss it charges, none.
TEST(CheckpointTest, AJobThatSavesWhenStoppedLosesNothing) {
  const Job job = Running(NewJob(1).SavesWhenStopped(), At(100));
  EXPECT_EQ(LossIfStopped(job, At(4100)), Secs(0));
}

TEST(CheckpointTest, PeriodicCheckpointsSaveTheLastMultipleOfTheInterval) {
  const Job job = Running(NewJob(1).CheckpointEvery(1800), At(100));
  EXPECT_EQ(LossIfStopped(job, At(100)), Secs(0));
  EXPECT_EQ(LossIfStopped(job, At(1000)), Secs(900)) << "before the first checkpoint";
  EXPECT_EQ(LossIfStopped(job, At(1900)), Secs(0)) << "at a checkpoint";
  EXPECT_EQ(LossIfStopped(job, At(1901)), Secs(1));
  EXPECT_EQ(LastCheckpoint(job, At(4100)), At(3700));
  EXPECT_EQ(LossIfStopped(job, At(4100)), Secs(400));
}

TEST(CheckpointTest, AReportedCheckpointCountsWhenItIsTheLater) {
  Job job = Running(NewJob(1).CheckpointEvery(1800), At(100));
  job.last_checkpoint = At(3900);
  EXPECT_EQ(LossIfStopped(job, At(4100)), Secs(200)) << "the report is after 3,700";
  job.last_checkpoint = At(3000);
  EXPECT_EQ(LossIfStopped(job, At(4100)), Secs(400)) << "the periodic one is later";
  job.last_checkpoint = At(50);
  job.spec.checkpoint_interval.reset();
  EXPECT_EQ(LossIfStopped(job, At(4100)), Secs(4000)) << "a report from before this run";
}

// When the policy may stop a run at no loss (victims.h puts a stop off
// until then): the end of the current interval; never for runs whose saves
// are not periodic.
TEST(CheckpointTest, TheNextCheckpointEndsTheCurrentInterval) {
  const Job job = Running(NewJob(1).CheckpointEvery(1800), At(100));
  EXPECT_EQ(NextCheckpoint(job, At(100)), At(1900));
  EXPECT_EQ(NextCheckpoint(job, At(1000)), At(1900));
  EXPECT_EQ(NextCheckpoint(job, At(1900)), At(3700)) << "at a checkpoint, the one after";
  EXPECT_EQ(NextCheckpoint(Running(NewJob(1), At(100)), At(1000)), std::nullopt);
  EXPECT_EQ(NextCheckpoint(Running(NewJob(1).CheckpointEvery(1800).SavesWhenStopped(), At(100)),
                           At(1000)),
            std::nullopt);
}

// A job that reports its checkpoints (live) is expected to save again one
// period after its last report, the period being the gap between its last
// two reports of this run; once that moment has passed, nothing is known.
TEST(CheckpointTest, ReportedCheckpointsTellTheNextOneByTheirPeriod) {
  ClusterState state;
  testing::AddNodes(state, 1, 8);
  state.Submit(NewJob(1).Gpus(1), At(0));
  Placement placement;
  placement.shape = state.Get(testing::Id(1)).spec.task;
  placement.tasks.push_back(TaskPlacement{testing::N(0), 0b1});
  state.Start(testing::Id(1), placement, At(100));
  state.ReportCheckpoint(testing::Id(1), At(700));
  EXPECT_EQ(NextCheckpoint(state.Get(testing::Id(1)), At(800)), std::nullopt) << "one report";
  state.ReportCheckpoint(testing::Id(1), At(1300));
  EXPECT_EQ(NextCheckpoint(state.Get(testing::Id(1)), At(1400)), At(1900));
  EXPECT_EQ(NextCheckpoint(state.Get(testing::Id(1)), At(1900)), std::nullopt) << "overdue";

  // A new run starts with no history.
  state.Preempt(testing::Id(1), At(1400));
  state.Start(testing::Id(1), placement, At(2000));
  state.ReportCheckpoint(testing::Id(1), At(2600));
  EXPECT_EQ(NextCheckpoint(state.Get(testing::Id(1)), At(2700)), std::nullopt);
}

}  // namespace
}  // namespace berth::core
