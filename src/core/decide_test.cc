// Scenario tests for Decide: nodes and jobs in, starts, reasons,
// reservations and preemptions out.
#include "core/decide.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/placer.h"
#include "core/test_builders.h"

namespace berth::core {
namespace {

using testing::AddNodes;
using testing::Apply;
using testing::At;
using ::testing::ElementsAre;
using testing::FindPending;
using testing::Id;
using ::testing::IsEmpty;
using testing::N;
using testing::NamedPolicy;
using testing::NewJob;
using ::testing::Not;
using testing::Secs;
using testing::StartedIds;
using testing::Submit;
using testing::TableEstimator;

// Submits and starts a job at `now` wherever the placer puts it.
void RunNow(ClusterState& state, const JobSpec& spec, Time now) {
  state.Submit(spec, spec.submit_time);
  state.Start(spec.id, *Place(state.capacity(), ResolveRequest(state.nodes(), spec).request), now);
}

DecideOptions Full() { return DecideOptions{ExplainLevel::kFull}; }

TEST(DecideTest, FifoBlocksTheLineBehindTheHead) {
  ClusterState state;
  AddNodes(state, 1, 8);
  RunNow(state, NewJob(1).Gpus(6).Limit(100), At(0));
  Submit(state, NewJob(2).Gpus(4).Submit(10).Limit(100));
  Submit(state, NewJob(3).Gpus(1).Submit(20).Limit(100));

  const Decision decision = Decide(state, At(30), NamedPolicy("fifo"), Full());
  EXPECT_THAT(decision.starts, IsEmpty()) << "job 3 fits but must not pass job 2";
  ASSERT_EQ(decision.pending.size(), 2u);
  EXPECT_EQ(decision.pending[0].job, Id(2));
  EXPECT_EQ(decision.pending[0].reason, ReasonCode::kResources);
  EXPECT_EQ(decision.pending[0].eta, At(100));
  EXPECT_EQ(decision.pending[0].after_job, Id(1));
  EXPECT_EQ(decision.pending[1].job, Id(3));
  EXPECT_EQ(decision.pending[1].reason, ReasonCode::kPriority);
  EXPECT_EQ(decision.pending[1].blocker, Id(2));
  EXPECT_EQ(decision.pending[1].position, 1);
  EXPECT_EQ(decision.pending[1].eta, At(100)) << "starts with job 2 once job 1 ends";
}

TEST(DecideTest, FifoStartsEverythingThatFitsInOrder) {
  ClusterState state;
  AddNodes(state, 2, 8);
  Submit(state, NewJob(1).Gpus(8).Submit(0));
  Submit(state, NewJob(2).Gpus(4).Submit(1));
  Submit(state, NewJob(3).Gpus(4).Submit(2));
  Submit(state, NewJob(4).Gpus(1).Submit(3));
  const Decision decision = Decide(state, At(5), NamedPolicy("fifo"));
  EXPECT_THAT(StartedIds(decision), ElementsAre(Id(1), Id(2), Id(3)));
  EXPECT_EQ(decision.starts[0].placement.tasks[0].node, N(0));
  EXPECT_EQ(decision.starts[1].placement.tasks[0].node, N(1));
  EXPECT_EQ(decision.starts[2].placement.tasks[0].node, N(1));
  ASSERT_EQ(decision.pending.size(), 1u);
  EXPECT_EQ(decision.pending[0].reason, ReasonCode::kResources);
}

TEST(DecideTest, JobsThatCanNeverFitDoNotBlockAnyone) {
  ClusterState state;
  AddNodes(state, 1, 8);
  Submit(state, NewJob(1).Gpus(8).Tasks(2).Submit(0));      // 16 GPUs on an 8-GPU cluster
  Submit(state, NewJob(2).Gpus(2).Type("A100").Submit(1));  // no such model
  Submit(state, NewJob(3).Gpus(2).Submit(2));
  const Decision decision = Decide(state, At(5), NamedPolicy("fifo"));
  EXPECT_THAT(StartedIds(decision), ElementsAre(Id(3)));
  ASSERT_EQ(decision.pending.size(), 2u);
  EXPECT_EQ(decision.pending[0].reason, ReasonCode::kInfeasible);
  EXPECT_EQ(decision.pending[1].reason, ReasonCode::kInfeasible);
}

TEST(DecideTest, SjfOracleRunsTheShortestFirstAndBlocksBehindIt) {
  ClusterState state;
  AddNodes(state, 1, 8);
  RunNow(state, NewJob(9).Gpus(4), At(0));
  Submit(state, NewJob(1).Gpus(2).Submit(0));
  Submit(state, NewJob(2).Gpus(8).Submit(1));
  Submit(state, NewJob(3).Gpus(2).Submit(2));
  auto runtimes = std::make_shared<TableEstimator>(std::map<JobId, Duration>{
      {Id(1), Secs(500)}, {Id(2), Secs(10)}, {Id(3), Secs(100)}, {Id(9), Secs(1000)}});
  const Decision decision = Decide(state, At(5), NamedPolicy("sjf-oracle", runtimes));
  // Job 2 (10 s) heads the line but needs 8 GPUs; strict order blocks 3 and 1.
  EXPECT_THAT(decision.starts, IsEmpty());
  EXPECT_EQ(decision.pending[0].job, Id(2));
  EXPECT_EQ(decision.pending[1].job, Id(3));
  EXPECT_EQ(decision.pending[2].job, Id(1));
}

TEST(DecideTest, GangStartsWholeOrNotAtAll) {
  ClusterState state;
  AddNodes(state, 2, 8);
  RunNow(state, NewJob(10).Gpus(4), At(0));
  RunNow(state, NewJob(11).Gpus(4), At(0));
  Submit(state, NewJob(1).Gpus(8).Tasks(2).Submit(1));
  const Decision decision = Decide(state, At(5), NamedPolicy("fifo"));
  EXPECT_THAT(decision.starts, IsEmpty());
  ASSERT_EQ(decision.pending.size(), 1u);
  EXPECT_EQ(decision.pending[0].reason, ReasonCode::kResources);
}

TEST(DecideTest, AGangOfUnevenTasksHoldsEachTasksOwnShare) {
  ClusterState state;
  AddNodes(state, 2, 8);
  RunNow(state, NewJob(10).Gpus(4).Limit(100), At(0));  // both on n0
  RunNow(state, NewJob(11).Gpus(4).Limit(200), At(0));
  Submit(state, NewJob(1).GpusPerTask({5, 1}).Limit(100).Submit(1));
  // n1 holds either task, n0 neither: it waits until job 10 ends.
  Decision decision = Decide(state, At(5), NamedPolicy("fifo"), Full());
  EXPECT_THAT(decision.starts, IsEmpty());
  ASSERT_EQ(decision.pending.size(), 1u);
  EXPECT_EQ(decision.pending[0].eta, At(100));

  state.Finish(Id(10), At(100));
  decision = Decide(state, At(100), NamedPolicy("fifo"));
  Apply(state, decision, At(100));
  ASSERT_THAT(StartedIds(decision), ElementsAre(Id(1)));
  const Placement& placement = state.Get(Id(1)).placement;
  EXPECT_EQ(placement.tasks[0].node, N(1));
  EXPECT_EQ(placement.tasks[1].node, N(0));
  EXPECT_EQ(state.capacity().free_gpu_count(N(0)), 3);
  EXPECT_EQ(state.capacity().free_gpu_count(N(1)), 3);
  state.Finish(Id(1), At(150));
  EXPECT_EQ(state.capacity().free_gpu_count(N(0)), 4);
  EXPECT_EQ(state.capacity().free_gpu_count(N(1)), 8);
}

TEST(DecideTest, BackfillNeverDelaysTheReservation) {
  ClusterState state;
  AddNodes(state, 1, 8);
  RunNow(state, NewJob(1).Gpus(4).Limit(100), At(0));
  Submit(state, NewJob(2).Gpus(8).Limit(1000).Submit(1));  // head: needs the whole node
  Submit(state, NewJob(3).Gpus(2).Limit(50).Submit(2));    // ends at 60 < 100: may backfill
  Submit(state, NewJob(4).Gpus(2).Limit(500).Submit(3));   // would hold GPUs past 100

  const Decision decision = Decide(state, At(10), NamedPolicy("slurm"), Full());
  EXPECT_THAT(StartedIds(decision), ElementsAre(Id(3)));
  ASSERT_EQ(decision.reservations.size(), 1u);
  EXPECT_EQ(decision.reservations[0].job, Id(2));
  EXPECT_EQ(decision.reservations[0].start, At(100));
  EXPECT_EQ(FindPending(decision, Id(2))->reason, ReasonCode::kReserved);
  EXPECT_EQ(FindPending(decision, Id(2))->eta, At(100));
  EXPECT_EQ(FindPending(decision, Id(4))->reason, ReasonCode::kReservation);
  EXPECT_EQ(FindPending(decision, Id(4))->blocker, Id(2));
}

// The ETA plan replays the discipline: a job behind the reserved head
// starts in the plan as soon as it fits without delaying the head, not
// after the head (issue 30: planned strictly in order, four ETAs in five
// on ITP cluster02 were late by more than a quarter).
TEST(DecideTest, TheEtaPlanBackfillsAsTheDisciplineDoes) {
  ClusterState state;
  AddNodes(state, 1, 8);
  RunNow(state, NewJob(1).Gpus(4).Limit(100), At(0));
  RunNow(state, NewJob(2).Gpus(4).Limit(300), At(0));
  Submit(state, NewJob(3).Gpus(8).Limit(1000).Submit(1));  // the head: the node at 300
  Submit(state, NewJob(4).Gpus(4).Limit(150).Submit(2));   // 100..250: ends before 300
  Submit(state, NewJob(5).Gpus(4).Limit(1000).Submit(3));  // would delay the head

  const Decision decision = Decide(state, At(10), NamedPolicy("slurm"), Full());
  EXPECT_THAT(decision.starts, IsEmpty());
  EXPECT_EQ(FindPending(decision, Id(3))->eta, At(300));
  EXPECT_EQ(FindPending(decision, Id(4))->eta, At(100));
  EXPECT_EQ(FindPending(decision, Id(4))->after_job, Id(1));
  EXPECT_EQ(FindPending(decision, Id(5))->eta, At(1300)) << "after the head, as it must wait";
}

TEST(DecideTest, BackfillMayUseGpusTheReservationDoesNotNeed) {
  ClusterState state;
  AddNodes(state, 2, 8);
  RunNow(state, NewJob(1).Gpus(8).Limit(100), At(0));      // n0 busy until 100
  RunNow(state, NewJob(2).Gpus(4).Limit(5000), At(0));     // n1 half busy until 5000
  Submit(state, NewJob(3).Gpus(8).Limit(1000).Submit(1));  // reserved on n0 at 100
  Submit(state,
         NewJob(4).Gpus(4).Limit(9000).Submit(2));  // long, but n1's free half is not reserved
  const Decision decision = Decide(state, At(10), NamedPolicy("slurm"));
  ASSERT_EQ(decision.reservations.size(), 1u);
  EXPECT_EQ(decision.reservations[0].placement.Nodes(), std::vector<NodeId>{N(0)});
  EXPECT_THAT(StartedIds(decision), ElementsAre(Id(4)));
  EXPECT_EQ(decision.starts[0].placement.tasks[0].node, N(1));
}

TEST(DecideTest, SrtfPreemptsTheLongestRemainingJobOnly) {
  ClusterState state;
  AddNodes(state, 1, 8);
  auto runtimes = std::make_shared<TableEstimator>(
      std::map<JobId, Duration>{{Id(1), Secs(500)}, {Id(2), Secs(1000)}, {Id(3), Secs(10)}});
  RunNow(state, NewJob(1).Gpus(4), At(0));
  RunNow(state, NewJob(2).Gpus(4), At(0));
  Submit(state, NewJob(3).Gpus(4).Submit(5));
  const Decision decision = Decide(state, At(10), NamedPolicy("srtf-oracle", runtimes));
  ASSERT_EQ(decision.preemptions.size(), 1u);
  EXPECT_EQ(decision.preemptions[0].job, Id(2));
  EXPECT_EQ(decision.preemptions[0].for_job, Id(3));
  ASSERT_EQ(decision.starts.size(), 1u);
  EXPECT_EQ(decision.starts[0].job, Id(3));
  EXPECT_THAT(decision.starts[0].preempts, ElementsAre(Id(2)));

  Apply(state, decision, At(10));
  EXPECT_EQ(state.Get(Id(2)).state, JobState::kPending);
  EXPECT_EQ(state.Get(Id(2)).executed, Secs(10));
}

TEST(DecideTest, PreemptionDoesNotHappenWhenFreeRoomExists) {
  ClusterState state;
  AddNodes(state, 2, 8);
  auto runtimes = std::make_shared<TableEstimator>(
      std::map<JobId, Duration>{{Id(1), Secs(5000)}, {Id(2), Secs(10)}});
  RunNow(state, NewJob(1).Gpus(8), At(0));
  Submit(state, NewJob(2).Gpus(8).Submit(1));
  const Decision decision = Decide(state, At(2), NamedPolicy("srtf-oracle", runtimes));
  EXPECT_THAT(decision.preemptions, IsEmpty());
  EXPECT_THAT(StartedIds(decision), ElementsAre(Id(2)));
}

TEST(DecideTest, PreemptibleOnlyScopeSparesOtherJobs) {
  ClusterState state;
  AddNodes(state, 1, 8);
  auto runtimes = std::make_shared<TableEstimator>(
      std::map<JobId, Duration>{{Id(1), Secs(5000)}, {Id(2), Secs(5000)}, {Id(3), Secs(10)}});
  RunNow(state, NewJob(1).Gpus(4), At(0));
  RunNow(state, NewJob(2).Gpus(4).Preemptible(), At(0));
  Submit(state, NewJob(3).Gpus(8).Submit(1));
  Policy policy = NamedPolicy("srtf-oracle", runtimes);
  policy.preemption_scope = PreemptionScope::kPreemptibleOnly;
  Decision decision = Decide(state, At(2), policy);
  EXPECT_THAT(decision.preemptions, IsEmpty()) << "job 1 is not preemptible, so 8 GPUs never free";

  Submit(state, NewJob(4).Gpus(4).Submit(1));
  runtimes = std::make_shared<TableEstimator>(std::map<JobId, Duration>{
      {Id(1), Secs(5000)}, {Id(2), Secs(5000)}, {Id(3), Secs(10)}, {Id(4), Secs(20)}});
  policy.runtimes = runtimes;
  decision = Decide(state, At(2), policy);
  ASSERT_EQ(decision.preemptions.size(), 1u);
  EXPECT_EQ(decision.preemptions[0].job, Id(2));
  EXPECT_THAT(StartedIds(decision), ElementsAre(Id(4)));
}

TEST(DecideTest, LasNewJobsPreemptJobsThatAttainedTooMuch) {
  ClusterState state;
  AddNodes(state, 1, 8);
  RunNow(state, NewJob(1).Gpus(8).Submit(0), At(0));
  Submit(state, NewJob(2).Gpus(8).Submit(100));
  const Policy las = NamedPolicy("las");
  // Before job 1 crosses 18,000 GPU-seconds (2,250 s on 8 GPUs): same queue,
  // and job 1 arrived first, so no preemption.
  Decision decision = Decide(state, At(2000), las);
  EXPECT_THAT(decision.preemptions, IsEmpty());
  ASSERT_TRUE(decision.next_decision);
  EXPECT_EQ(decision.next_decision->micros() / 1'000'000, 2250);

  decision = Decide(state, At(2300), las);
  ASSERT_EQ(decision.preemptions.size(), 1u);
  EXPECT_EQ(decision.preemptions[0].job, Id(1));
  EXPECT_THAT(StartedIds(decision), ElementsAre(Id(2)));
}

// Issue 30, item 4: live, LAS stops only jobs submitted as preemptible; the
// simulator keeps the reference rule (any job).
TEST(DecideTest, LiveLasNeverPreemptsAJobThatIsNotPreemptible) {
  ClusterState state;
  AddNodes(state, 1, 8);
  RunNow(state, NewJob(1).Gpus(8).Submit(0), At(0));
  Submit(state, NewJob(2).Gpus(8).Submit(100));
  const Policy live = std::move(MakePolicy("las")).value();
  EXPECT_EQ(live.preemption_scope, PreemptionScope::kPreemptibleOnly);
  EXPECT_THAT(Decide(state, At(2300), live).preemptions, IsEmpty());
  EXPECT_THAT(Decide(state, At(2300), NamedPolicy("las")).preemptions, Not(IsEmpty()))
      << "the simulator's LAS stops job 1 here";

  ClusterState preemptible;
  AddNodes(preemptible, 1, 8);
  RunNow(preemptible, NewJob(1).Gpus(8).Submit(0).Preemptible(), At(0));
  Submit(preemptible, NewJob(2).Gpus(8).Submit(100));
  const Decision decision = Decide(preemptible, At(2300), live);
  ASSERT_EQ(decision.preemptions.size(), 1u);
  EXPECT_EQ(decision.preemptions[0].job, Id(1));
}

TEST(DecideTest, HeldJobsAreNotCandidatesAndSaySo) {
  ClusterState state;
  AddNodes(state, 1, 8);
  Submit(state, NewJob(1).Submit(0));
  Submit(state, NewJob(2).Gpus(16).Submit(0));
  state.Hold(Id(1));
  const Decision decision = Decide(state, At(1), NamedPolicy("fifo"), Full());
  EXPECT_THAT(decision.starts, IsEmpty());
  ASSERT_EQ(decision.pending.size(), 2u);
  EXPECT_EQ(decision.pending[0].reason, ReasonCode::kInfeasible);
  EXPECT_EQ(decision.pending[1].job, Id(1));
  EXPECT_EQ(decision.pending[1].reason, ReasonCode::kHeld);
  EXPECT_EQ(decision.pending[1].position, 1);
  EXPECT_FALSE(decision.pending[1].eta);
}

TEST(DecideTest, ReasonNamesAreStableApiWords) {
  for (ReasonCode code :
       {ReasonCode::kHeld, ReasonCode::kPriority, ReasonCode::kResources,
        ReasonCode::kFragmentation, ReasonCode::kNodesUnavailable, ReasonCode::kReserved,
        ReasonCode::kReservation, ReasonCode::kQuota, ReasonCode::kInfeasible}) {
    EXPECT_EQ(ParseReason(ReasonName(code)), code);
  }
  EXPECT_EQ(ReasonName(ReasonCode::kNodesUnavailable), "nodes_unavailable");
  EXPECT_FALSE(ParseReason("Resources"));
}

TEST(DecideTest, DrainedNodesBlockWithAReason) {
  ClusterState state;
  AddNodes(state, 1, 8);
  state.SetNodeState(N(0), NodeState::kDraining);
  Submit(state, NewJob(1).Submit(0));
  const Decision decision = Decide(state, At(1), NamedPolicy("fifo"), Full());
  ASSERT_EQ(decision.pending.size(), 1u);
  EXPECT_EQ(decision.pending[0].reason, ReasonCode::kNodesUnavailable);
  EXPECT_FALSE(decision.pending[0].eta) << "no running job will free a drained node";
}

TEST(DecideTest, NoExplanationWhenNotAsked) {
  ClusterState state;
  AddNodes(state, 1, 8);
  Submit(state, NewJob(1).Gpus(16).Submit(0));
  const Decision decision =
      Decide(state, At(1), NamedPolicy("fifo"), DecideOptions{ExplainLevel::kNone});
  EXPECT_THAT(decision.pending, IsEmpty());
}

}  // namespace
}  // namespace berth::core
