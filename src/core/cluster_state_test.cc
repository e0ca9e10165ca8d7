#include "core/cluster_state.h"

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "core/placer.h"
#include "core/test_builders.h"

namespace berth::core {
namespace {

using testing::AddNodes;
using testing::At;
using testing::Id;
using testing::N;
using testing::NewJob;
using testing::Secs;

Placement PlaceOrDie(const ClusterState& state, const JobSpec& spec) {
  std::optional<Placement> placement =
      Place(state.capacity(), ResolveRequest(state.nodes(), spec).request);
  EXPECT_TRUE(placement);
  return *placement;
}

TEST(ClusterStateTest, JobLifecycleMovesCapacity) {
  ClusterState state;
  AddNodes(state, 1, 8);
  const JobSpec spec = NewJob(1).Gpus(4);
  state.Submit(spec, At(10));
  EXPECT_EQ(state.pending().size(), 1u);
  EXPECT_EQ(state.Get(Id(1)).queued_since, At(10));

  state.Start(Id(1), PlaceOrDie(state, spec), At(20));
  EXPECT_TRUE(state.pending().empty());
  EXPECT_EQ(state.running().size(), 1u);
  EXPECT_EQ(state.capacity().free_gpu_count(N(0)), 4);
  EXPECT_EQ(state.Get(Id(1)).RunTime(At(50)), Secs(30));

  state.Finish(Id(1), At(120));
  EXPECT_EQ(state.Find(Id(1)), nullptr);
  EXPECT_EQ(state.capacity().free_gpu_count(N(0)), 8);
  EXPECT_NEAR(state.usage().QueueUsage("default", At(120)), 400.0, 0.1);
}

TEST(ClusterStateTest, KeepsTheRunningPreemptibleJobsApart) {
  ClusterState state;
  AddNodes(state, 1, 8);
  const JobSpec keep = NewJob(1).Gpus(2);
  const JobSpec a = NewJob(2).Gpus(2).Preemptible();
  const JobSpec b = NewJob(3).Gpus(2).Preemptible();
  for (const JobSpec& spec : {keep, a, b}) state.Submit(spec, At(0));
  for (const JobSpec& spec : {keep, a, b}) state.Start(spec.id, PlaceOrDie(state, spec), At(1));
  auto ids = [&] {
    std::vector<JobId> out;
    for (const auto& [id, job] : state.running_preemptible()) out.push_back(id);
    return out;
  };
  EXPECT_EQ(ids(), (std::vector<JobId>{Id(2), Id(3)}));
  state.Preempt(Id(2), At(5));  // back in the queue
  state.Finish(Id(3), At(6));
  state.Finish(Id(1), At(6));
  EXPECT_TRUE(ids().empty());
  state.Start(Id(2), PlaceOrDie(state, a), At(7));
  EXPECT_EQ(ids(), std::vector<JobId>{Id(2)});
  state.Cancel(Id(2), At(8));
  EXPECT_TRUE(ids().empty());
}

TEST(ClusterStateTest, CountsTheWaitingJobsOfEachUserQueueAndTaskShape) {
  ClusterState state;
  AddNodes(state, 1, 8);
  using Counts = ClusterState::WaitingCounts;
  using Shapes = ClusterState::ShapeCounts;
  const JobSpec a = NewJob(1).User("ann").Queue("vision").Gpus(8);
  const JobSpec b = NewJob(2).User("bob").Queue("vision").Gpus(2).Tasks(3).Type("H100");
  state.Submit(a, At(0));
  state.Submit(b, At(0));
  state.Submit(NewJob(3).User("bob").Queue("nlp").Gpus(8), At(0));
  state.Hold(Id(3));  // held jobs wait too
  EXPECT_EQ(state.waiting_users(), (Counts{{"ann", 1}, {"bob", 2}}));
  EXPECT_EQ(state.waiting_queues(), (Counts{{"nlp", 1}, {"vision", 2}}));
  EXPECT_EQ(state.waiting_shapes(), (Shapes{{{a.task, {}}, 2}, {{b.task, {"H100"}}, 3}}))
      << "tasks, not jobs, per shape and model";

  state.Start(Id(1), PlaceOrDie(state, a), At(1));
  state.Cancel(Id(3), At(2));
  EXPECT_EQ(state.waiting_users(), (Counts{{"bob", 1}}));
  EXPECT_EQ(state.waiting_queues(), (Counts{{"vision", 1}}));
  EXPECT_EQ(state.waiting_shapes(), (Shapes{{{b.task, {"H100"}}, 3}}));

  state.Preempt(Id(1), At(3));
  EXPECT_EQ(state.waiting_users(), (Counts{{"ann", 1}, {"bob", 1}}));
  state.Cancel(Id(1), At(4));
  state.Cancel(Id(2), At(4));
  EXPECT_TRUE(state.waiting_users().empty());
  EXPECT_TRUE(state.waiting_queues().empty());
  EXPECT_TRUE(state.waiting_shapes().empty());
}

TEST(ClusterStateTest, PreemptionRequeuesAndKeepsAttainedService) {
  ClusterState state;
  AddNodes(state, 1, 8);
  const JobSpec spec = NewJob(7).Gpus(2);
  state.Submit(spec, At(0));
  state.Start(Id(7), PlaceOrDie(state, spec), At(100));
  state.Preempt(Id(7), At(400));

  const Job& job = state.Get(Id(7));
  EXPECT_EQ(job.state, JobState::kPending);
  EXPECT_EQ(job.preemptions, 1);
  EXPECT_EQ(job.executed, Secs(300));
  EXPECT_EQ(job.queued_since, At(400));
  EXPECT_DOUBLE_EQ(job.AttainedGpuSeconds(At(1000)), 600.0);
  EXPECT_EQ(state.capacity().free_gpu_count(N(0)), 8);

  state.Start(Id(7), PlaceOrDie(state, spec), At(500));
  EXPECT_EQ(state.Get(Id(7)).RunTime(At(600)), Secs(400));
}

// A run that ended otherwise (its node lost, a retry) requeues the job as a
// preemption does, without counting as one.
TEST(ClusterStateTest, ARequeueKeepsAttainedServiceAndIsNotAPreemption) {
  ClusterState state;
  AddNodes(state, 1, 8);
  const JobSpec spec = NewJob(7).Gpus(2);
  state.Submit(spec, At(0));
  state.Start(Id(7), PlaceOrDie(state, spec), At(100));
  state.Requeue(Id(7), At(400));

  const Job& job = state.Get(Id(7));
  EXPECT_EQ(job.state, JobState::kPending);
  EXPECT_EQ(job.preemptions, 0);
  EXPECT_EQ(job.executed, Secs(300));
  EXPECT_EQ(job.queued_since, At(400));
  EXPECT_EQ(state.capacity().free_gpu_count(N(0)), 8);
  ASSERT_EQ(state.pending_by_wait().size(), 1u);
}

// A restarted owner submits a job with what it knew of its earlier runs:
// the job goes on from them as if this state had seen them.
TEST(ClusterStateTest, AJobSubmittedWithItsEarlierRunsGoesOnFromThem) {
  ClusterState state;
  AddNodes(state, 1, 8);
  const JobSpec spec = NewJob(7).Gpus(2).Submit(0);
  state.Submit(spec, At(1000), EarlierRuns{Secs(300), 2});

  const Job& job = state.Get(Id(7));
  EXPECT_EQ(job.preemptions, 2);
  EXPECT_EQ(job.executed, Secs(300));
  EXPECT_DOUBLE_EQ(job.AttainedGpuSeconds(At(1000)), 600.0);
  ASSERT_EQ(state.pending_by_wait().size(), 1u);
  EXPECT_EQ(state.pending_by_wait().begin()->origin, At(300)) << "its runs were not waiting";
  state.Start(Id(7), PlaceOrDie(state, spec), At(1000));
  state.Preempt(Id(7), At(1100));
  EXPECT_EQ(state.Get(Id(7)).preemptions, 3);
  EXPECT_EQ(state.Get(Id(7)).executed, Secs(400));
}

TEST(ClusterStateTest, HoldKeepsAJobOutOfThePendingSet) {
  ClusterState state;
  AddNodes(state, 1, 8);
  state.Submit(NewJob(1), At(0));
  state.Hold(Id(1));
  EXPECT_TRUE(state.pending().empty());
  EXPECT_EQ(state.held().size(), 1u);
  state.Release(Id(1));
  EXPECT_EQ(state.pending().size(), 1u);
  state.Cancel(Id(1), At(5));
  EXPECT_EQ(state.Find(Id(1)), nullptr);
}

TEST(ClusterStateTest, AnAmendedWaitingJobMovesQueueAndKeepsItsWait) {
  ClusterState state;
  AddNodes(state, 1, 8);
  using Counts = ClusterState::WaitingCounts;
  state.Submit(NewJob(1).Queue("vision").Gpus(2), At(0));
  state.Submit(NewJob(2).Queue("vision").Gpus(2), At(0));
  state.Hold(Id(2));
  state.Amend(NewJob(1).Queue("nlp").Gpus(2).Priority(5).Limit(60));
  state.Amend(NewJob(2).Queue("nlp").Gpus(2));
  EXPECT_EQ(state.waiting_queues(), (Counts{{"nlp", 2}}));
  EXPECT_EQ(state.Get(Id(1)).spec.priority, 5);
  EXPECT_EQ(state.Get(Id(1)).queued_since, At(0)) << "its wait goes on";
  EXPECT_EQ(state.pending().size(), 1u);
  EXPECT_EQ(state.held().size(), 1u) << "a held job stays held";
}

// The pending jobs by the start of their wait, as (origin, id, milli-GPUs).
std::vector<std::tuple<Time, JobId, int64_t>> Waits(const ClusterState& state) {
  std::vector<std::tuple<Time, JobId, int64_t>> out;
  for (const ClusterState::PendingWait& wait : state.pending_by_wait()) {
    out.emplace_back(wait.origin, wait.id, wait.milli_gpus);
  }
  return out;
}

TEST(ClusterStateTest, PendingJobsAreKeptByTheStartOfTheirWait) {
  ClusterState state;
  AddNodes(state, 1, 8);
  const JobSpec first = NewJob(1).Gpus(2).Submit(50);
  const JobSpec second = NewJob(2).Gpus(4).Submit(10);
  const JobSpec third = NewJob(3).Gpus(1).Submit(30);
  for (const JobSpec& spec : {first, second, third}) state.Submit(spec, spec.submit_time);
  using W = std::tuple<Time, JobId, int64_t>;
  EXPECT_EQ(Waits(state),
            (std::vector<W>{{At(10), Id(2), 4000}, {At(30), Id(3), 1000}, {At(50), Id(1), 2000}}));
  EXPECT_EQ(state.pending_milli_gpus(), 7000);

  // Job 2 runs 100 s and is requeued: its wait counts from 10 + 100.
  state.Start(Id(2), PlaceOrDie(state, second), At(60));
  EXPECT_EQ(state.pending_milli_gpus(), 3000);
  state.Preempt(Id(2), At(160));
  state.Hold(Id(3));
  EXPECT_EQ(Waits(state), (std::vector<W>{{At(50), Id(1), 2000}, {At(110), Id(2), 4000}}));
  EXPECT_EQ(state.pending_milli_gpus(), 6000);

  state.Release(Id(3));
  state.Cancel(Id(1), At(200));
  EXPECT_EQ(Waits(state), (std::vector<W>{{At(30), Id(3), 1000}, {At(110), Id(2), 4000}}));
  EXPECT_EQ(state.pending_milli_gpus(), 5000);
}

TEST(ClusterStateTest, CancelOfARunningJobFreesItsGpus) {
  ClusterState state;
  AddNodes(state, 1, 8);
  const JobSpec spec = NewJob(3).Gpus(8);
  state.Submit(spec, At(0));
  state.Start(Id(3), PlaceOrDie(state, spec), At(0));
  state.Cancel(Id(3), At(10));
  EXPECT_EQ(state.capacity().free_gpu_count(N(0)), 8);
  EXPECT_TRUE(state.running().empty());
}

TEST(ClusterStateDeathTest, RefusesAPlacementThatDoesNotFit) {
  ClusterState state;
  AddNodes(state, 1, 8);
  const JobSpec a = NewJob(1).Gpus(8);
  const JobSpec b = NewJob(2).Gpus(8);
  state.Submit(a, At(0));
  state.Submit(b, At(0));
  const Placement placement = PlaceOrDie(state, a);
  state.Start(Id(1), placement, At(0));
  EXPECT_DEATH(state.Start(Id(2), placement, At(0)), "does not fit");
}

}  // namespace
}  // namespace berth::core
