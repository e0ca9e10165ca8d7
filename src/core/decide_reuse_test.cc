// Event cycles that reuse a full cycle's order (DecideOptions::reuse): they
// walk only the front of the queue, merge the jobs that arrived since by
// their keys, and agree with a full cycle on what they walk.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/decide.h"
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
using testing::NamedPolicy;
using testing::NewJob;
using testing::Secs;
using testing::StartedIds;
using testing::Submit;
using testing::TableEstimator;

// Two 8-GPU nodes held by two 8-GPU runs (jobs 1 and 2, since 0).
void TwoBusyNodes(ClusterState& state) {
  AddNodes(state, 2, 8);
  for (int64_t id : {1, 2}) {
    const JobSpec spec = NewJob(id).Gpus(8).Limit(1000);
    state.Submit(spec, At(0));
    state.Start(spec.id, *Place(state.capacity(), ResolveRequest(state.nodes(), spec).request),
                At(0));
  }
}

// Two busy nodes, and `waiting` one-GPU jobs (ids 101.., submitted a
// second apart) queued behind them.
void BusyClusterWithQueue(ClusterState& state, int waiting) {
  TwoBusyNodes(state);
  for (int i = 0; i < waiting; ++i) Submit(state, NewJob(101 + i).Submit(1 + i).Limit(100));
}

QueueOrder FullOrder(const ClusterState& state, Time now, const Policy& policy) {
  DecideOptions options;
  options.keep_order = true;
  Decision decision = Decide(state, now, policy, options);
  EXPECT_TRUE(decision.order.has_value());
  return std::move(*decision.order);
}

DecideOptions Reusing(const QueueOrder& order, size_t depth) {
  DecideOptions options;
  options.reuse = &order;
  options.depth = depth;
  return options;
}

TEST(DecideReuseTest, AnEventCycleStartsTheFrontOfWhatAFullCycleWould) {
  ClusterState state;
  BusyClusterWithQueue(state, 20);
  const Policy fifo = NamedPolicy("fifo");
  const QueueOrder order = FullOrder(state, At(100), fifo);
  EXPECT_EQ(order.ranked.size(), 20u);
  EXPECT_EQ(order.known.size(), 20u);

  state.Finish(Id(1), At(200));  // eight GPUs free
  const Decision full = Decide(state, At(200), fifo);
  EXPECT_THAT(StartedIds(full),
              ElementsAre(Id(101), Id(102), Id(103), Id(104), Id(105), Id(106), Id(107), Id(108)));
  EXPECT_FALSE(full.partial);

  const Decision front = Decide(state, At(200), fifo, Reusing(order, 5));
  EXPECT_TRUE(front.partial);
  EXPECT_THAT(StartedIds(front), ElementsAre(Id(101), Id(102), Id(103), Id(104), Id(105)))
      << "only the first five in line are walked";
  EXPECT_TRUE(front.pending.empty()) << "all it walked started; the rest keep their reasons";

  const Decision deeper = Decide(state, At(200), fifo, Reusing(order, 12));
  EXPECT_EQ(StartedIds(deeper), StartedIds(full));
  ASSERT_EQ(deeper.pending.size(), 4u) << "walked 12, started 8";
  EXPECT_EQ(deeper.pending[0].job, Id(109));
  EXPECT_EQ(deeper.pending[0].position, 0);
  EXPECT_EQ(deeper.pending[3].job, Id(112));
}

TEST(DecideReuseTest, JobsThatLeftTheLineAreSkippedAndArrivalsMergeByKey) {
  ClusterState state;
  BusyClusterWithQueue(state, 20);
  // Shortest first by known duration: the queued jobs take 100 s each.
  std::map<JobId, Duration> durations;
  for (int64_t id = 101; id <= 120; ++id) durations[Id(id)] = Secs(100);
  durations[Id(200)] = Secs(10);   // arrives later, shorter than all
  durations[Id(201)] = Secs(500);  // arrives later, longer than all
  const Policy sjf =
      NamedPolicy("sjf-oracle", std::make_shared<TableEstimator>(durations, Secs(1000)));
  const QueueOrder order = FullOrder(state, At(100), sjf);

  state.Cancel(Id(101), At(150));
  state.Hold(Id(102));
  Submit(state, NewJob(200).Submit(160).Limit(100));
  Submit(state, NewJob(201).Submit(161).Limit(1000));
  state.Finish(Id(1), At(200));

  const Decision front = Decide(state, At(200), sjf, Reusing(order, 3));
  EXPECT_THAT(StartedIds(front), ElementsAre(Id(200), Id(103), Id(104)))
      << "the short arrival goes first; the cancelled and held jobs are passed over";

  // 20 pending: the long arrival ranks after every known job, so a walk of
  // 19 ends on the last known one and does not reach it.
  const Decision deep = Decide(state, At(200), sjf, Reusing(order, 19));
  EXPECT_TRUE(deep.partial);
  ASSERT_EQ(deep.pending.size(), 19u - 8u) << "walked 19, started 8";
  EXPECT_EQ(deep.pending.back().job, Id(120));
  EXPECT_EQ(FindPending(deep, Id(201)), nullptr);
}

TEST(DecideReuseTest, AnArrivalThatCanNeverFitIsExplainedAtOnce) {
  ClusterState state;
  BusyClusterWithQueue(state, 20);
  const Policy fifo = NamedPolicy("fifo");
  const QueueOrder order = FullOrder(state, At(100), fifo);
  Submit(state, NewJob(300).Gpus(16).Submit(150).Limit(100));  // no node has 16 GPUs

  const Decision front = Decide(state, At(200), fifo, Reusing(order, 3));
  ASSERT_EQ(front.pending.size(), 4u);
  EXPECT_EQ(front.pending.back().job, Id(300));
  EXPECT_EQ(front.pending.back().reason, ReasonCode::kInfeasible);
}

TEST(DecideReuseTest, AShortQueueOrAFullExplanationIgnoresTheOrder) {
  ClusterState state;
  BusyClusterWithQueue(state, 20);
  const Policy fifo = NamedPolicy("fifo");
  const QueueOrder order = FullOrder(state, At(100), fifo);
  state.Finish(Id(1), At(200));

  // 20 pending, depth 20: ranking them all is exact and cheap.
  const Decision whole = Decide(state, At(200), fifo, Reusing(order, 20));
  EXPECT_FALSE(whole.partial);
  EXPECT_EQ(whole.pending.size(), 12u);

  DecideOptions full = Reusing(order, 5);
  full.explain = ExplainLevel::kFull;
  const Decision planned = Decide(state, At(200), fifo, full);
  EXPECT_FALSE(planned.partial) << "ETAs for every job need the whole order";
  EXPECT_EQ(planned.pending.size(), 12u);
  ASSERT_TRUE(planned.pending.back().eta.has_value());
}

TEST(DecideReuseTest, ARequeuedJobIsAnArrival) {
  ClusterState state;
  BusyClusterWithQueue(state, 20);
  const Policy fifo = NamedPolicy("fifo");
  const QueueOrder order = FullOrder(state, At(100), fifo);
  // Job 2 (submitted at 0, so first in FIFO) goes back to the queue.
  state.Preempt(Id(2), At(150));

  const Decision front = Decide(state, At(200), fifo, Reusing(order, 3));
  EXPECT_THAT(StartedIds(front), ElementsAre(Id(2))) << "its 8 GPUs are free again";
  Apply(state, front, At(200));
  EXPECT_TRUE(state.Get(Id(2)).running());
}

// Run times set per job, and changed as the test goes.
class SettableEstimator final : public RuntimeEstimator {
 public:
  void Set(int64_t id, int64_t seconds) { durations_[Id(id)] = Secs(seconds); }
  Duration Expected(const Job& job) const override {
    auto it = durations_.find(job.spec.id);
    return it == durations_.end() ? Secs(100) : it->second;
  }

 private:
  std::map<JobId, Duration> durations_;
};

// FIFO with EASY backfill: the first job that does not fit gets a
// reservation at the earliest expected end that makes room for it.
Policy BackfillWith(std::shared_ptr<const RuntimeEstimator> runtimes) {
  Policy policy = NamedPolicy("fifo", std::move(runtimes));
  policy.discipline = Discipline::kBackfill;
  return policy;
}

// Two busy nodes; job 101 (8 GPUs) heads a queue of twenty one-GPU jobs,
// so it waits for a whole node.
void TwoNodesAndAWholeNodeJobFirst(ClusterState& state) {
  TwoBusyNodes(state);
  Submit(state, NewJob(101).Gpus(8).Submit(1).Limit(1000));
  for (int i = 0; i < 20; ++i) Submit(state, NewJob(102 + i).Submit(2 + i).Limit(100));
}

// Jobs 1 and 2 expected to run `first` and `second` seconds.
std::shared_ptr<SettableEstimator> RunTimes(int64_t first, int64_t second) {
  auto runtimes = std::make_shared<SettableEstimator>();
  runtimes->Set(1, first);
  runtimes->Set(2, second);
  return runtimes;
}

Time ReservedStart(const Decision& decision) {
  EXPECT_EQ(decision.reservations.size(), 1u);
  if (decision.reservations.empty()) return At(-1);
  EXPECT_EQ(decision.reservations[0].job, Id(101));
  return decision.reservations[0].start;
}

TEST(DecideReuseTest, AnEventCycleReservesWithTheEndsItsFullCycleExpected) {
  ClusterState state;
  TwoNodesAndAWholeNodeJobFirst(state);
  const std::shared_ptr<SettableEstimator> runtimes = RunTimes(500, 800);
  const Policy policy = BackfillWith(runtimes);
  const QueueOrder order = FullOrder(state, At(100), policy);
  ASSERT_EQ(order.ends.size(), 2u);
  EXPECT_EQ(order.ends[0].job, Id(1));
  EXPECT_EQ(order.ends[0].end, At(500));
  EXPECT_EQ(order.ends[1].end, At(800));

  runtimes->Set(1, 600);  // learnt since: job 1 is now expected to end at 600
  EXPECT_EQ(ReservedStart(Decide(state, At(200), policy)), At(600)) << "a full cycle asks again";
  const Decision event = Decide(state, At(200), policy, Reusing(order, 3));
  EXPECT_TRUE(event.partial);
  EXPECT_EQ(ReservedStart(event), At(500)) << "an event cycle plans as its full cycle did";

  // Past the end its full cycle expected, job 1 still runs: estimated anew
  // (100 s more of its 600), not taken as ending now.
  EXPECT_EQ(ReservedStart(Decide(state, At(550), policy, Reusing(order, 3))), At(600));
}

TEST(DecideReuseTest, ARunThatStartedSinceItsFullCycleIsEstimatedAnew) {
  ClusterState state;
  TwoNodesAndAWholeNodeJobFirst(state);
  const std::shared_ptr<SettableEstimator> runtimes = RunTimes(900, 800);
  const Policy policy = BackfillWith(runtimes);
  const QueueOrder order = FullOrder(state, At(100), policy);

  // Job 1 goes back to the queue and runs again from 160, now expected to
  // take 300 s in all: 150 s ran before, 40 s of this run by 200.
  state.Preempt(Id(1), At(150));
  const JobSpec& spec = state.Get(Id(1)).spec;
  state.Start(Id(1), *Place(state.capacity(), ResolveRequest(state.nodes(), spec).request),
              At(160));
  runtimes->Set(1, 300);
  EXPECT_EQ(ReservedStart(Decide(state, At(200), policy, Reusing(order, 3))), At(310))
      << "not the end its first run was expected at (900), nor job 2's (800)";
}

TEST(DecideReuseTest, ARunAnEventCycleStartedIsPlannedWithTheEndItsStartExpected) {
  // Two busy nodes; jobs 101 and 102 (8 GPUs each) wait for a whole node,
  // five one-GPU jobs behind them (a queue longer than the walk's depth).
  ClusterState state;
  TwoBusyNodes(state);
  Submit(state, NewJob(101).Gpus(8).Submit(1).Limit(5000));
  Submit(state, NewJob(102).Gpus(8).Submit(2).Limit(5000));
  for (int i = 0; i < 5; ++i) Submit(state, NewJob(103 + i).Submit(3 + i).Limit(5000));
  const std::shared_ptr<SettableEstimator> runtimes = RunTimes(500, 900);
  runtimes->Set(101, 300);
  const Policy policy = BackfillWith(runtimes);
  const QueueOrder order = FullOrder(state, At(100), policy);

  // Job 1 ends at 500 and an event cycle starts 101, expected to take 300 s.
  state.Finish(Id(1), At(500));
  const Decision started = Decide(state, At(500), policy, Reusing(order, 3));
  ASSERT_THAT(StartedIds(started), ElementsAre(Id(101)));
  EXPECT_EQ(started.starts[0].expected_remaining, Secs(300));
  Apply(state, started, At(500));

  runtimes->Set(101, 600);  // learnt since: 101 is now expected to end at 1100
  auto reserved_for_102 = [&](const Decision& decision) {
    EXPECT_EQ(decision.reservations.size(), 1u);
    if (decision.reservations.empty()) return At(-1);
    EXPECT_EQ(decision.reservations[0].job, Id(102));
    return decision.reservations[0].start;
  };
  EXPECT_EQ(reserved_for_102(Decide(state, At(600), policy)), At(900))
      << "a full cycle asks again: job 2's end (900) comes before 101's (1100)";
  EXPECT_EQ(reserved_for_102(Decide(state, At(600), policy, Reusing(order, 3))), At(800))
      << "an event cycle plans 101's run as the cycle that started it did";
  // Past the end its start expected, 101 still runs: estimated anew.
  EXPECT_EQ(reserved_for_102(Decide(state, At(850), policy, Reusing(order, 3))), At(900));
}

// The Berth drain rule reads every live job, so event cycles leave it to
// the next full cycle: between them a drain-long arrival ranks by its score.
TEST(DecideReuseTest, ADrainLongArrivalGoesFirstFromTheNextFullCycle) {
  ClusterState state;
  AddNodes(state, 1, 8);
  const JobSpec running = NewJob(1).Gpus(7);
  state.Submit(running, At(0));
  state.Start(running.id, *Place(state.capacity(), ResolveRequest(state.nodes(), running).request),
              At(0));
  Submit(state, NewJob(101).Submit(10));
  Submit(state, NewJob(102).Submit(20));
  const Policy berth = NamedPolicy(
      "berth",
      std::make_shared<TableEstimator>(std::map<JobId, Duration>{
          {Id(1), Secs(1000)}, {Id(101), Secs(100)}, {Id(102), Secs(100)}, {Id(200), Secs(5000)}}));
  const QueueOrder order = FullOrder(state, At(100), berth);

  // One GPU free, three pending; the horizon at 150 s is (7x850 + 100 +
  // 100 + 5000) GPU-seconds / 8 GPUs = 1,394 s, and job 200 runs 5,000.
  Submit(state, NewJob(200).Submit(150));
  EXPECT_THAT(StartedIds(Decide(state, At(150), berth, Reusing(order, 1))), ElementsAre(Id(101)))
      << "the event cycle ranks the arrival by its score";
  EXPECT_THAT(StartedIds(Decide(state, At(150), berth)), ElementsAre(Id(200)))
      << "a full cycle puts it first";
}

}  // namespace
}  // namespace berth::core
