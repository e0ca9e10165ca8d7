// The Berth policy's pieces on small scenarios where the right answer is
// known (issue 3): preemption picks the least-loss victims, respects the
// minimum run time and the preemptible flag; a starving job reaches the head,
// yields to a backlog of younger jobs or of starving ones, and not past the
// hard bound, where it reserves instead of preempting;
// small tasks are placed so as not to split the room waiting jobs need.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/berth_orderer.h"
#include "core/decide.h"
#include "core/placer.h"
#include "core/runtime_predictor.h"
#include "core/test_builders.h"

namespace berth::core {
namespace {

using testing::AddNodes;
using testing::At;
using ::testing::ElementsAre;
using testing::Id;
using ::testing::IsEmpty;
using testing::JobBuilder;
using testing::N;
using testing::NewJob;
using testing::Secs;
using testing::StartedIds;
using testing::TableEstimator;

void StartOn(ClusterState& state, const JobSpec& spec, NodeId node, GpuMask gpus, Time at) {
  state.Submit(spec, spec.submit_time);
  Placement placement;
  placement.shape = spec.task;
  placement.tasks.push_back(TaskPlacement{node, gpus});
  state.Start(spec.id, placement, at);
}

Policy Berth(std::map<JobId, Duration> durations) {
  return testing::NamedPolicy("berth", std::make_shared<TableEstimator>(std::move(durations)));
}

TEST(BerthPolicyTest, PreemptsTheVictimThatLosesLeastWork) {
  ClusterState state;
  AddNodes(state, 1, 8);
  StartOn(state, NewJob(1).Gpus(4).Preemptible(), N(0), 0x0f, At(0));
  StartOn(state, NewJob(2).Gpus(4).Preemptible(), N(0), 0xf0, At(3000));
  state.Submit(NewJob(3).Gpus(4).Submit(4000), At(4000));
  const Policy policy = Berth({{Id(1), Secs(90000)}, {Id(2), Secs(90000)}, {Id(3), Secs(60)}});

  Decision decision = Decide(state, At(4000), policy);
  ASSERT_EQ(decision.preemptions.size(), 1u);
  EXPECT_EQ(decision.preemptions[0].job, Id(2)) << "job 2 ran 1,000 s, job 1 4,000 s";

  // Job 1 just saved a checkpoint: stopping it now loses only 100 s.
  state.ReportCheckpoint(Id(1), At(3900));
  decision = Decide(state, At(4000), policy);
  ASSERT_EQ(decision.preemptions.size(), 1u);
  EXPECT_EQ(decision.preemptions[0].job, Id(1));
}

// Issue 30, item 2: a job that saves every 1,000 s of its run has lost only
// 50 s at 4,050 s; the one started at 3,000 s without checkpoints 1,050 s.
TEST(BerthPolicyTest, PeriodicCheckpointsMakeALongRunTheCheaperVictim) {
  ClusterState state;
  AddNodes(state, 1, 8);
  StartOn(state, NewJob(1).Gpus(4).Preemptible().CheckpointEvery(1000), N(0), 0x0f, At(0));
  StartOn(state, NewJob(2).Gpus(4).Preemptible(), N(0), 0xf0, At(3000));
  state.Submit(NewJob(3).Gpus(4).Submit(4050), At(4050));
  const Policy policy = Berth({{Id(1), Secs(90000)}, {Id(2), Secs(90000)}, {Id(3), Secs(60)}});
  const Decision decision = Decide(state, At(4050), policy);
  ASSERT_EQ(decision.preemptions.size(), 1u);
  EXPECT_EQ(decision.preemptions[0].job, Id(1));
}

// Issue 30: job 1 saves every 1,000 s of its run. At 3,900 s it would lose
// 900 s, and its next save is 100 s away: the stop waits for the save, and
// the decision asks to be made again then. At the save it loses nothing.
TEST(BerthPolicyTest, AStopWaitsForTheVictimsNextSaveWhenThatIsNearerThanItsLoss) {
  ClusterState state;
  AddNodes(state, 1, 4);
  StartOn(state, NewJob(1).Gpus(4).Preemptible().CheckpointEvery(1000), N(0), 0x0f, At(0));
  state.Submit(NewJob(2).Gpus(4).Submit(3900), At(3900));
  const Policy policy = Berth({{Id(1), Secs(90000)}, {Id(2), Secs(60)}});

  Decision decision = Decide(state, At(3900), policy);
  EXPECT_THAT(decision.preemptions, IsEmpty());
  ASSERT_TRUE(decision.next_decision);
  EXPECT_EQ(*decision.next_decision, At(4000));

  decision = Decide(state, At(4000), policy);
  ASSERT_EQ(decision.preemptions.size(), 1u);
  EXPECT_EQ(decision.preemptions[0].job, Id(1));
  // Early in an interval (400 s lost, the save 600 s away) it stops at once.
  decision = Decide(state, At(4400), policy);
  EXPECT_EQ(decision.preemptions.size(), 1u);
}

// Issue 30: order says who should run, not that stopping a run pays. Job 1
// (4 GPUs, 7,000 s predicted) has run 4,000 s without a checkpoint; job 2
// (2,000 s predicted) ranks ahead of it (2,000 < 3,000 s left), but
// stopping job 1 loses 4,000 s to save job 2 at most 3,000 s of waiting.
// Once job 1 has saved at 3,900 s, the loss is 100 s and the stop pays.
TEST(BerthPolicyTest, StopsARunOnlyWhenTheGainPaysForTheLoss) {
  ClusterState state;
  AddNodes(state, 1, 4);
  StartOn(state, NewJob(1).Gpus(4).Preemptible(), N(0), 0x0f, At(0));
  state.Submit(NewJob(2).Gpus(4).Submit(4000), At(4000));
  Policy policy = Berth({{Id(1), Secs(7000)}, {Id(2), Secs(2000)}});
  ASSERT_GT(policy.preemption_gain_ratio, 0) << "berth weighs the gain by default";
  policy.preemption_gain_ratio = 1;  // the bare exchange argument

  Decision decision = Decide(state, At(4000), policy);
  EXPECT_THAT(decision.preemptions, IsEmpty()) << "2,000 + 4,000 lost > 3,000 s saved";
  Policy by_order_alone = Berth({{Id(1), Secs(7000)}, {Id(2), Secs(2000)}});
  by_order_alone.preemption_gain_ratio = 0;
  EXPECT_EQ(Decide(state, At(4000), by_order_alone).preemptions.size(), 1u)
      << "without the rule, job 2's rank alone stops job 1";

  state.ReportCheckpoint(Id(1), At(3900));
  decision = Decide(state, At(4000), policy);
  ASSERT_EQ(decision.preemptions.size(), 1u) << "2,000 + 100 lost + 30 restart < 3,000";
  EXPECT_EQ(decision.preemptions[0].job, Id(1));
  EXPECT_THAT(StartedIds(decision), ElementsAre(Id(2)));
}

// Issue 30: a pending member of a burst none of whose members has started
// weighs in the gain rule as the probe (10 minutes): a bet on what its run
// will tell the rest. Against a stop that loses work, which is certain, it
// weighs as what is known of its size: nothing here, so the predictor's
// hour. Job 1 (5 hours by its user's word) saves every 1,000 s of its run.
TEST(BerthPolicyTest, AProbeStopsOnlyARunThatLosesNothing) {
  ClusterState state;
  AddNodes(state, 1, 4);
  auto predictor = std::make_shared<RuntimePredictor>();
  const JobSpec running =
      NewJob(1).Name("long").Estimate(18000).Gpus(4).Preemptible().CheckpointEvery(1000);
  const JobSpec probe = NewJob(2).User("u").Gpus(4).Submit(4000);
  predictor->Submitted(running);
  predictor->Submitted(probe);
  StartOn(state, running, N(0), 0x0f, At(0));
  state.Submit(probe, At(4000));
  const Policy policy = testing::NamedPolicy("berth", predictor);
  ASSERT_EQ(predictor->MeanRemaining(*state.Find(Id(2)), At(4000)), Secs(600));

  EXPECT_EQ(Decide(state, At(4000), policy).preemptions.size(), 1u)
      << "at its save it loses nothing: 4 x 600 + restart < 14,000 s left";
  EXPECT_THAT(Decide(state, At(4400), policy).preemptions, IsEmpty())
      << "400 s after its save: 4 x 3,600 + 400 lost > 13,600 s left";
}

// A higher priority class is an operator's word: it stops the run however
// the sizes weigh (the same jobs as above, job 2 one class up).
TEST(BerthPolicyTest, AHigherPriorityClassStopsARunWithoutTheGainRule) {
  ClusterState state;
  AddNodes(state, 1, 4);
  StartOn(state, NewJob(1).Gpus(4).Preemptible(), N(0), 0x0f, At(0));
  state.Submit(NewJob(2).Gpus(4).Priority(1).Submit(4000), At(4000));
  const Policy policy = Berth({{Id(1), Secs(7000)}, {Id(2), Secs(2000)}});
  const Decision decision = Decide(state, At(4000), policy);
  ASSERT_EQ(decision.preemptions.size(), 1u);
  EXPECT_EQ(decision.preemptions[0].job, Id(1));
}

// Aging reorders the queue; it does not pay for a restart. Two jobs of the
// same predicted size: the one that waited 20 h ranks ahead of the one that
// has run 1,000 s (aging divides its size by 6), yet stopping the runner
// would only trade one 5,000 s job for another and throw away what it did
// (the victim saves when stopped here: the loss is the restart alone).
TEST(BerthPolicyTest, AnAgedJobDoesNotStopARunOfTheSameSize) {
  ClusterState state;
  AddNodes(state, 1, 4);
  const Time now = At(0) + Duration::Hours(20);
  StartOn(state, NewJob(1).Gpus(4).Preemptible().SavesWhenStopped().Submit(71000), N(0), 0x0f,
          At(71000));
  state.Submit(NewJob(2).Gpus(4).Submit(0), At(0));
  Policy policy = Berth({{Id(1), Secs(5000)}, {Id(2), Secs(5000)}});
  Decision decision = Decide(state, now, policy);
  EXPECT_THAT(decision.preemptions, IsEmpty());

  policy.preemption_gain_ratio = 0;  // order alone (the reference simulators' rule)
  decision = Decide(state, now, policy);
  ASSERT_EQ(decision.preemptions.size(), 1u) << "the aged job ranks ahead";
}

TEST(BerthPolicyTest, AJobAlreadyStoppingMakesRoomWithoutStoppingAnother) {
  ClusterState state;
  AddNodes(state, 1, 8);
  StartOn(state, NewJob(1).Gpus(4).Preemptible(), N(0), 0x0f, At(0));
  StartOn(state, NewJob(2).Gpus(4).Preemptible(), N(0), 0xf0, At(3000));
  state.MarkStopping(Id(2));  // asked to stop earlier; still in its grace period
  EXPECT_TRUE(state.Get(Id(2)).running()) << "it holds its GPUs until it exits";
  state.Submit(NewJob(3).Gpus(4).Submit(4000), At(4000));
  const Policy policy = Berth({{Id(1), Secs(90000)}, {Id(2), Secs(90000)}, {Id(3), Secs(60)}});
  const Decision decision = Decide(state, At(4000), policy);
  EXPECT_THAT(decision.preemptions, IsEmpty()) << "job 2 is leaving anyway";
  ASSERT_THAT(StartedIds(decision), ElementsAre(Id(3)));
  EXPECT_THAT(decision.starts[0].preempts, ElementsAre(Id(2))) << "it waits for job 2's GPUs";
  EXPECT_EQ(decision.starts[0].placement.tasks[0].gpus, 0xf0u);
}

// The server defers a start until its victims have stopped, and cycles run
// meanwhile: each must find the room already being freed, not stop more.
TEST(BerthPolicyTest, APreemptionIsNotRepeatedWhileItsVictimStops) {
  ClusterState state;
  AddNodes(state, 1, 8);
  StartOn(state, NewJob(1).Gpus(4).Preemptible(), N(0), 0x0f, At(0));
  StartOn(state, NewJob(2).Gpus(4).Preemptible(), N(0), 0xf0, At(1000));
  state.Submit(NewJob(3).Gpus(4).Submit(4000), At(4000));
  const Policy policy = Berth({{Id(1), Secs(90000)}, {Id(2), Secs(90000)}, {Id(3), Secs(60)}});
  const Decision first = Decide(state, At(4000), policy);
  ASSERT_EQ(first.preemptions.size(), 1u);
  const JobId victim = first.preemptions[0].job;
  state.MarkStopping(victim);  // the start itself waits for the victim to exit

  for (int64_t now : {4001, 4030, 4300}) {
    const Decision again = Decide(state, At(now), policy);
    EXPECT_THAT(again.preemptions, IsEmpty()) << "at " << now;
    ASSERT_THAT(StartedIds(again), ElementsAre(Id(3))) << "at " << now;
    EXPECT_THAT(again.starts[0].preempts, ElementsAre(victim)) << "at " << now;
  }
}

TEST(BerthPolicyTest, PrefersFewerVictimsOverLessLoss) {
  ClusterState state;
  AddNodes(state, 2, 4);
  StartOn(state, NewJob(1).Gpus(2).Preemptible(), N(0), 0b0011, At(3000));
  StartOn(state, NewJob(2).Gpus(2).Preemptible(), N(0), 0b1100, At(3000));
  StartOn(state, NewJob(3).Gpus(4).Preemptible(), N(1), 0b1111, At(1000));
  state.Submit(NewJob(4).Gpus(4).Submit(4000), At(4000));
  const Policy policy =
      Berth({{Id(1), Secs(90000)}, {Id(2), Secs(90000)}, {Id(3), Secs(90000)}, {Id(4), Secs(60)}});
  const Decision decision = Decide(state, At(4000), policy);
  ASSERT_EQ(decision.preemptions.size(), 1u);
  EXPECT_EQ(decision.preemptions[0].job, Id(3));
  EXPECT_THAT(StartedIds(decision), ElementsAre(Id(4)));
  EXPECT_EQ(decision.starts[0].placement.tasks[0].node, N(1));
}

TEST(BerthPolicyTest, NeverStopsAJobBeforeItsMinimumRunOrOneNotPreemptible) {
  ClusterState state;
  AddNodes(state, 1, 8);
  StartOn(state, NewJob(1).Gpus(4), N(0), 0x0f, At(0));                   // not preemptible
  StartOn(state, NewJob(2).Gpus(4).Preemptible(), N(0), 0xf0, At(3800));  // ran 200 s < 10 min
  state.Submit(NewJob(3).Gpus(4).Submit(3900), At(3900));
  const Policy policy = Berth({{Id(1), Secs(90000)}, {Id(2), Secs(90000)}, {Id(3), Secs(60)}});
  Decision decision = Decide(state, At(4000), policy);
  EXPECT_THAT(decision.preemptions, IsEmpty());
  // Past its minimum run time, job 2 may go.
  decision = Decide(state, At(3800 + 600), policy);
  ASSERT_EQ(decision.preemptions.size(), 1u);
  EXPECT_EQ(decision.preemptions[0].job, Id(2));
}

// Job 1 (4 GPUs on node 0, preemptible) was stopped three times; its
// fourth run starts at `restart`.
void StartStoppedThrice(ClusterState& state, JobBuilder job, Time restart) {
  const JobSpec spec = job.Gpus(4).Preemptible();
  StartOn(state, spec, N(0), 0x0f, At(0));
  const Placement placement = state.Get(spec.id).placement;
  for (int64_t stop : {1000, 2000, 3000}) {
    state.Preempt(spec.id, At(stop));
    state.Start(spec.id, placement, stop == 3000 ? restart : At(stop + 10));
  }
}

// A run stopped before is protected for 10 min x 1.2 per earlier stop (3
// stops: 1,036.8 s), so the least-loss victim is not the one job that
// restarted last again and again. Not against a higher priority class, not
// for a run that loses nothing when stopped.
TEST(BerthPolicyTest, EachStopLengthensTheRunAJobIsGrantedBeforeTheNext) {
  const Policy policy = Berth({{Id(1), Secs(90000)}, {Id(2), Secs(60)}});
  ASSERT_EQ(policy.min_run_time, Duration::Minutes(10));
  ASSERT_DOUBLE_EQ(policy.min_run_growth, 1.2);
  const Time restart = At(10000);
  auto decide_with = [&](JobBuilder victim, JobBuilder newcomer, Time now) {
    ClusterState state;
    AddNodes(state, 1, 4);
    StartStoppedThrice(state, std::move(victim), restart);
    const JobSpec spec = newcomer.Gpus(4).Submit(now.micros() / 1'000'000);
    state.Submit(spec, now);
    return Decide(state, now, policy);
  };

  EXPECT_THAT(decide_with(NewJob(1), NewJob(2), restart + Secs(1030)).preemptions, IsEmpty())
      << "past the flat 10 min, within 1,036.8 s";
  EXPECT_EQ(decide_with(NewJob(1), NewJob(2), restart + Secs(1040)).preemptions.size(), 1u);
  EXPECT_EQ(
      decide_with(NewJob(1).SavesWhenStopped(), NewJob(2), restart + Secs(700)).preemptions.size(),
      1u)
      << "a run that saves when stopped loses nothing: the flat minimum";
  EXPECT_EQ(decide_with(NewJob(1), NewJob(2).Priority(1), restart + Secs(700)).preemptions.size(),
            1u)
      << "a higher priority class is an operator's word";
}

// The protection holds against the starving head too: its stops are what
// stopped the same long runs over and over.
TEST(BerthPolicyTest, AStarvingHeadWaitsForAProtectedRun) {
  const Policy policy = Berth({{Id(1), Secs(900000)}, {Id(2), Secs(500000)}});
  const BerthOrderConfig config;
  const Time restart = At(0) + config.starvation_bound + Duration::Hours(1);
  ClusterState state;
  AddNodes(state, 1, 4);
  state.Submit(NewJob(2).Gpus(4).Submit(0), At(0));
  StartStoppedThrice(state, NewJob(1).Submit(0), restart);

  Decision decision = Decide(state, restart + Secs(700), policy);
  EXPECT_THAT(decision.preemptions, IsEmpty());
  ASSERT_EQ(decision.reservations.size(), 1u);
  EXPECT_EQ(decision.reservations[0].job, Id(2));
  decision = Decide(state, restart + Secs(1040), policy);
  ASSERT_EQ(decision.preemptions.size(), 1u);
  EXPECT_THAT(StartedIds(decision), ElementsAre(Id(2)));
}

TEST(BerthPolicyTest, AStarvingJobReachesTheHeadAndGetsItsRoom) {
  ClusterState state;
  AddNodes(state, 1, 8);
  // A big, long job waits behind a stream of short ones that keep the node busy.
  state.Submit(NewJob(1).Gpus(8).Submit(0), At(0));
  StartOn(state, NewJob(2).Gpus(2).Preemptible().Submit(0), N(0), 0b11, At(0));
  const BerthOrderConfig config;
  const Time before = At(0) + config.starvation_bound - Secs(1);
  const Time after = At(0) + config.starvation_bound;
  state.Submit(NewJob(3).Gpus(2).Submit(before.micros() / 1'000'000), before);
  const Policy policy = Berth({{Id(1), Secs(500000)}, {Id(2), Secs(900000)}, {Id(3), Secs(60)}});

  Decision decision = Decide(state, before, policy, DecideOptions{ExplainLevel::kReasons});
  EXPECT_THAT(StartedIds(decision), ElementsAre(Id(3))) << "short job first, big one reserved";
  ASSERT_EQ(decision.reservations.size(), 1u);
  EXPECT_EQ(decision.reservations[0].job, Id(1));
  ASSERT_TRUE(decision.next_decision);
  EXPECT_LE(*decision.next_decision, after) << "wakes up when job 1 starts starving";

  // At the bound job 1 goes first and stops job 2 (preemptible, past its
  // minimum run) to start now; job 3 waits behind it.
  decision = Decide(state, after, policy, DecideOptions{ExplainLevel::kReasons});
  EXPECT_THAT(StartedIds(decision), ElementsAre(Id(1)));
  ASSERT_EQ(decision.preemptions.size(), 1u);
  EXPECT_EQ(decision.preemptions[0].job, Id(2));
}

TEST(BerthPolicyTest, AStartedStarvingJobIsNotThrownOutByNewcomers) {
  ClusterState state;
  AddNodes(state, 1, 8);
  const BerthOrderConfig config;
  state.Submit(NewJob(1).Gpus(8).Preemptible().Submit(0), At(0));
  const Policy policy = Berth({{Id(1), Secs(500000)}, {Id(2), Secs(10)}});
  // Job 1 starves (the node was busy until now) and starts as the head.
  const Time start = At(0) + config.starvation_bound + Secs(10);
  const Decision first = Decide(state, start, policy);
  ASSERT_THAT(StartedIds(first), ElementsAre(Id(1)));
  EXPECT_TRUE(first.starts[0].guaranteed);
  testing::Apply(state, first, start);
  EXPECT_TRUE(state.Get(Id(1)).guaranteed);

  // Hours later a tiny job arrives; it may not stop the guaranteed run.
  const Time later = start + Duration::Hours(2);
  state.Submit(NewJob(2).Gpus(8).Submit(later.micros() / 1'000'000), later);
  const Decision decision = Decide(state, later, policy);
  EXPECT_THAT(decision.preemptions, IsEmpty());
}

TEST(BerthPolicyTest, ASmallTaskDoesNotSplitTheRoomWaitingJobsNeed) {
  // Two 4-GPU nodes with 3 and 2 GPUs free. A 1-GPU job goes first, two
  // 2-GPU jobs wait behind it. Best fit puts the small job on the node with
  // 2 free and leaves 3 + 1: one 2-GPU job fits. The fragmentation rule
  // (against the waiting shapes) leaves 2 + 2: both do.
  ClusterState state;
  AddNodes(state, 2, 4);
  StartOn(state, NewJob(1).Gpus(1), N(0), 0b0001, At(0));
  StartOn(state, NewJob(2).Gpus(2), N(1), 0b0011, At(0));
  state.Submit(NewJob(3).Gpus(1), At(0));
  state.Submit(NewJob(4).Gpus(2), At(0));
  state.Submit(NewJob(5).Gpus(2), At(0));
  Policy policy = Berth({{Id(1), Secs(90000)},
                         {Id(2), Secs(90000)},
                         {Id(3), Secs(60)},
                         {Id(4), Secs(600)},
                         {Id(5), Secs(700)}});
  ASSERT_TRUE(policy.fragmentation_aware);
  Decision decision = Decide(state, At(10), policy);
  EXPECT_THAT(StartedIds(decision), ElementsAre(Id(3), Id(4), Id(5)));
  EXPECT_EQ(decision.starts[0].placement.tasks[0].node, N(0));

  policy.fragmentation_aware = false;
  decision = Decide(state, At(10), policy);
  EXPECT_THAT(StartedIds(decision), ElementsAre(Id(3), Id(4)));
  EXPECT_EQ(decision.starts[0].placement.tasks[0].node, N(1)) << "best fit";
}

// Whether the orderer makes the pending job `id` the starving head (the one
// job that starts under the guarantee).
bool IsHead(const ClusterState& state, JobId id, Time now) {
  const Policy policy = Berth({});
  const BerthOrderer orderer{BerthOrderConfig{}};
  const std::vector<const Job*> jobs = {&state.Get(id)};
  std::vector<OrderKey> keys;
  const FairShare share(state, now);
  orderer.Keys(jobs, OrderContext{state, now, *policy.runtimes, &share}, keys);
  return orderer.Guarantees(keys[0]);
}

TEST(BerthPolicyTest, AStarvingJobYieldsToABacklogOfYoungerJobsUntilTheHardBound) {
  ClusterState state;
  AddNodes(state, 1, 8);
  const BerthOrderConfig config;
  ASSERT_EQ(config.drain_load, 0.75) << "the backlog line below: 6 of the node's 8 GPUs";
  state.Submit(NewJob(1).Gpus(8).Submit(0), At(0));
  auto submit = [&](int id, int gpus, Time at) {
    state.Submit(NewJob(id).Gpus(gpus).Submit(at.micros() / 1'000'000), at);
  };

  // Job 1 starves just as younger jobs asking for 7 GPUs arrive: fewer than
  // the cluster has, but more than a queue that drains (drain_load), so
  // they go first.
  const Time starving = At(0) + config.starvation_bound;
  submit(2, 6, starving);
  submit(3, 1, starving);
  EXPECT_FALSE(IsHead(state, Id(1), starving));
  // 6 GPUs of younger work drain: job 1 is the head.
  state.Cancel(Id(3), starving);
  EXPECT_TRUE(IsHead(state, Id(1), starving));

  // Past the hard bound it is the head whatever waits behind it (job 2 is
  // starving by then too and no longer counts as younger work).
  const Time hard = At(0) + config.starvation_hard_bound;
  submit(4, 8, hard - Secs(1));
  submit(5, 1, hard - Secs(1));
  EXPECT_FALSE(IsHead(state, Id(1), hard - Secs(1)));
  const Decision waiting = Decide(state, hard - Secs(1), Berth({}));
  ASSERT_TRUE(waiting.next_decision);
  EXPECT_LE(*waiting.next_decision, hard) << "wakes up when job 1 reaches the hard bound";
  EXPECT_TRUE(IsHead(state, Id(1), hard));
}

TEST(BerthPolicyTest, StarvingJobsAskingForMoreThanTheClusterYieldUntilTheHardBound) {
  ClusterState state;
  AddNodes(state, 1, 8);
  const BerthOrderConfig config;
  state.Submit(NewJob(1).Gpus(4).Submit(0), At(0));
  state.Submit(NewJob(2).Gpus(5).Submit(1), At(1));
  // Both starve, with no younger work: together they ask for 9 of the
  // node's 8 GPUs, so the oldest is no head.
  const Time starving = At(1) + config.starvation_bound;
  EXPECT_FALSE(IsHead(state, Id(1), starving));
  EXPECT_FALSE(IsHead(state, Id(2), starving));
  // Job 2 gone, the one left fits: it is the head.
  state.Cancel(Id(2), starving);
  EXPECT_TRUE(IsHead(state, Id(1), starving));

  // Past the hard bound the oldest is the head all the same.
  state.Submit(NewJob(3).Gpus(5).Submit(2), At(2));
  EXPECT_FALSE(IsHead(state, Id(1), starving + Secs(1)));
  EXPECT_TRUE(IsHead(state, Id(1), At(0) + config.starvation_hard_bound));
}

// The setting of AStarvingJobReachesTheHeadAndGetsItsRoom, at the hard
// bound instead: job 1 goes first all the same, but takes the reservation
// instead of stopping job 2, and a short job that would delay it waits.
TEST(BerthPolicyTest, AHeadPastTheHardBoundReservesInsteadOfPreempting) {
  ClusterState state;
  AddNodes(state, 1, 8);
  const BerthOrderConfig config;
  const Time hard = At(0) + config.starvation_hard_bound;
  state.Submit(NewJob(1).Gpus(8).Submit(0), At(0));
  StartOn(state, NewJob(2).Gpus(2).Preemptible().Submit(0), N(0), 0b11, hard - Secs(3600));
  state.Submit(NewJob(3).Gpus(2).Submit(hard.micros() / 1'000'000), hard);
  const Policy policy = Berth({{Id(1), Secs(500000)}, {Id(2), Secs(7200)}, {Id(3), Secs(7200)}});

  const Decision decision = Decide(state, hard, policy);
  EXPECT_THAT(decision.preemptions, IsEmpty());
  EXPECT_THAT(StartedIds(decision), IsEmpty()) << "job 3 would end after job 2";
  ASSERT_EQ(decision.reservations.size(), 1u);
  EXPECT_EQ(decision.reservations[0].job, Id(1));
  EXPECT_EQ(decision.reservations[0].start, hard + Secs(3600)) << "when job 2 ends";
}

TEST(BerthPolicyTest, AGuaranteedRunYieldsToABacklogOfYoungerJobsUntilTheHardBound) {
  const BerthOrderConfig config;
  // Job 1 starts as the starving head after waiting `waited`; two hours later
  // short jobs asking for 7 GPUs (a backlog: more than drain_load of the
  // 8-GPU node) arrive. Returns who is preempted for them. Job 1 saves its
  // work when stopped unless `loses`.
  auto preempted_after = [&](Duration waited, bool loses = false) {
    ClusterState state;
    AddNodes(state, 1, 8);
    JobSpec first_job = NewJob(1).Gpus(8).Preemptible().Submit(0);
    first_job.saves_when_stopped = !loses;
    state.Submit(first_job, At(0));
    const Policy policy = Berth({{Id(1), Secs(500000)}, {Id(2), Secs(10)}, {Id(3), Secs(10)}});
    const Time start = At(0) + waited;
    const Decision first = Decide(state, start, policy);
    EXPECT_THAT(StartedIds(first), ElementsAre(Id(1)));
    EXPECT_TRUE(first.starts[0].guaranteed);
    testing::Apply(state, first, start);
    const Time later = start + Duration::Hours(2);
    state.Submit(NewJob(2).Gpus(6).Submit(later.micros() / 1'000'000), later);
    state.Submit(NewJob(3).Gpus(1).Submit(later.micros() / 1'000'000), later);
    std::vector<JobId> victims;
    for (const Preemption& p : Decide(state, later, policy).preemptions) victims.push_back(p.job);
    return victims;
  };
  EXPECT_THAT(preempted_after(config.starvation_bound + Secs(10)), ElementsAre(Id(1)))
      << "the guarantee lapses while younger jobs are a backlog";
  EXPECT_THAT(preempted_after(config.starvation_hard_bound + Secs(10)), IsEmpty())
      << "a job that waited the hard bound keeps it";
  // Stopped, job 1 would lose its two hours and come straight back as the
  // head: the lapse lets the backlog pass only where that loses no work.
  EXPECT_THAT(preempted_after(config.starvation_bound + Secs(10), /*loses=*/true), IsEmpty());
}

TEST(BerthPolicyTest, ShortPredictedJobsGoFirstAndWaitingShrinksSize) {
  ClusterState state;
  AddNodes(state, 1, 8);
  // Together they ask for the whole node: a backlog, so shortest first.
  state.Submit(NewJob(1).Gpus(4).Submit(0), At(0));
  state.Submit(NewJob(2).Gpus(4).Submit(0), At(0));
  const Policy policy = Berth({{Id(1), Secs(4000)}, {Id(2), Secs(1000)}});
  const BerthOrderer orderer{BerthOrderConfig{}};
  std::vector<OrderKey> keys;
  const std::vector<const Job*> jobs = {&state.Get(Id(1)), &state.Get(Id(2))};
  const FairShare now_share(state, At(0));
  orderer.Keys(jobs, OrderContext{state, At(0), *policy.runtimes, &now_share}, keys);
  EXPECT_GT(keys[0], keys[1]) << "shorter predicted service first";
  // Job 1 arrived the same moment; its key shrinks as it waits.
  std::vector<OrderKey> later;
  const FairShare later_share(state, At(3600));
  orderer.Keys(jobs, OrderContext{state, At(3600), *policy.runtimes, &later_share}, later);
  EXPECT_LT(later[0], keys[0]);
}

std::vector<OrderKey> KeysAt(const ClusterState& state, Time now, const Policy& policy,
                             const std::vector<const Job*>& jobs) {
  const BerthOrderer orderer{BerthOrderConfig{}};
  const FairShare share(state, now);
  std::vector<OrderKey> keys;
  orderer.Keys(jobs, OrderContext{state, now, *policy.runtimes, &share}, keys);
  return keys;
}

TEST(BerthPolicyTest, WhileTheQueueDrainsTheJobsThatWouldEndLastGoFirstLargestFirst) {
  ClusterState state;
  AddNodes(state, 2, 8);
  StartOn(state, NewJob(1).Gpus(8), N(0), 0xff, At(0));
  state.Submit(NewJob(2).Gpus(2), At(0));
  state.Submit(NewJob(3).Gpus(6), At(0));
  state.Submit(NewJob(4).Gpus(2), At(0));
  const Policy policy = Berth({{Id(1), Secs(1000)},
                               {Id(2), Secs(100)},
                               {Id(3), Secs(2000)},
                               {Id(4), Secs(2500)},
                               {Id(5), Secs(100)}});
  // 10 of 16 GPUs pending; the horizon is (8x1000 + 2x100 + 6x2000 +
  // 2x2500) GPU-seconds / 16 GPUs = 1,575 s: jobs 3 and 4 would end last.
  std::vector<OrderKey> keys =
      KeysAt(state, At(0), policy, {&state.Get(Id(2)), &state.Get(Id(3)), &state.Get(Id(4))});
  EXPECT_LT(keys[1], keys[2]) << "job 3 (12,000 GPU-s) before job 4 (5,000), though shorter";
  EXPECT_LT(keys[2], keys[0]) << "job 4 before the short job 2";

  // Another 8 GPUs asked for: 18 pending, a backlog; shortest first again.
  state.Submit(NewJob(5).Gpus(8), At(0));
  keys = KeysAt(state, At(0), policy, {&state.Get(Id(2)), &state.Get(Id(3)), &state.Get(Id(4))});
  EXPECT_LT(keys[0], keys[2]);
  EXPECT_LT(keys[2], keys[1]);
}

TEST(BerthPolicyTest, ADrainLongJobWaitsForItsReservationInsteadOfPreempting) {
  ClusterState state;
  AddNodes(state, 2, 8);
  StartOn(state, NewJob(1).Gpus(8).Preemptible(), N(0), 0xff, At(0));
  StartOn(state, NewJob(2).Gpus(8).Preemptible(), N(1), 0xff, At(0));
  state.Submit(NewJob(3).Gpus(4).Submit(1000), At(1000));
  const std::map<JobId, Duration> durations = {
      {Id(1), Secs(5000)}, {Id(2), Secs(1100)}, {Id(3), Secs(3000)}};
  // At 1,000 s job 1 has 4,000 s left, job 2 100 s: the horizon is
  // (8x4000 + 8x100 + 4x3000) / 16 = 2,800 s, and job 3 runs 3,000.
  Decision decision = Decide(state, At(1000), Berth(durations));
  EXPECT_THAT(decision.preemptions, IsEmpty());
  EXPECT_THAT(StartedIds(decision), IsEmpty());
  ASSERT_EQ(decision.reservations.size(), 1u);
  EXPECT_EQ(decision.reservations[0].job, Id(3));
  EXPECT_EQ(decision.reservations[0].start, At(1100)) << "when job 2 ends";

  // Without the drain rule job 3 ranks before job 1 (12,000 GPU-seconds
  // against 32,000) and stops it (by order alone: the gain rule, which
  // would refuse this stop, is not what this test is about).
  PolicyConfig config;
  config.berth.drain_load = 0;
  config.berth_preemption_gain_ratio = 0;
  Policy plain = std::move(MakePolicy("berth", config)).value();
  plain.runtimes = std::make_shared<TableEstimator>(durations);
  decision = Decide(state, At(1000), plain);
  ASSERT_EQ(decision.preemptions.size(), 1u);
  EXPECT_EQ(decision.preemptions[0].job, Id(1));
  EXPECT_THAT(StartedIds(decision), ElementsAre(Id(3)));
}

}  // namespace
}  // namespace berth::core
