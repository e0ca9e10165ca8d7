// Deferred ETAs (DecideOptions::defer_etas): the plan a full cycle hands
// out gives exactly the ETAs the cycle would have planned itself, and it
// owns what it reads, so the state may change while it runs.
#include "core/eta_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "core/decide.h"
#include "core/eta.h"
#include "core/policy.h"
#include "core/random_scenario.h"
#include "core/test_builders.h"

namespace berth::core {
namespace {

using testing::Apply;
using testing::At;
using testing::Id;
using testing::MakeRandomScenario;
using testing::RandomScenario;
using testing::Secs;

// A random cluster with work running: jobs arrive over time, decided by
// `policy` as they come, until `until`.
std::unique_ptr<ClusterState> Busy(const RandomScenario& scenario, const Policy& policy,
                                   int64_t until) {
  auto state = std::make_unique<ClusterState>();
  for (const NodeSpec& node : scenario.nodes) state->AddNode(node);
  for (const JobSpec& job : scenario.jobs) {
    if (job.submit_time > At(until)) break;
    state->Submit(job, job.submit_time);
    Apply(*state, Decide(*state, job.submit_time, policy, DecideOptions{ExplainLevel::kNone}),
          job.submit_time);
  }
  return state;
}

std::map<JobId, PlannedEta> ById(const std::vector<PlannedEta>& etas) {
  std::map<JobId, PlannedEta> by_id;
  for (const PlannedEta& eta : etas) by_id[eta.job] = eta;
  return by_id;
}

class EtaPlanTest : public ::testing::TestWithParam<std::string_view> {
 protected:
  // Oracle policies get the user's limits as their truth.
  Policy PolicyUnderTest() const {
    return testing::NamedPolicy(GetParam(),
                                std::make_shared<UserLimitEstimator>(Duration::Days(1)));
  }
};

TEST_P(EtaPlanTest, ADeferredPlanGivesTheEtasTheCycleWouldHave) {
  const Policy policy = PolicyUnderTest();
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    const RandomScenario scenario = MakeRandomScenario(seed, 10, 200);
    std::unique_ptr<ClusterState> state = Busy(scenario, policy, 2000);
    const Time now = At(2000);
    const Decision inline_etas = Decide(*state, now, policy, DecideOptions{ExplainLevel::kFull});
    DecideOptions deferred{ExplainLevel::kFull};
    deferred.defer_etas = true;
    Decision later = Decide(*state, now, policy, deferred);
    ASSERT_TRUE(later.eta_plan.has_value());
    EXPECT_FALSE(inline_etas.eta_plan.has_value());
    ASSERT_EQ(later.pending.size(), inline_etas.pending.size());
    ASSERT_GT(later.pending.size(), 10u) << "seed " << seed << ": a queue to plan";

    const std::map<JobId, PlannedEta> planned = ById(PlanEtas(*later.eta_plan));
    int with_eta = 0;
    for (size_t i = 0; i < later.pending.size(); ++i) {
      const PendingJob& expected = inline_etas.pending[i];
      ASSERT_EQ(later.pending[i].job, expected.job);
      EXPECT_EQ(later.pending[i].reason, expected.reason);
      EXPECT_FALSE(later.pending[i].eta.has_value()) << "deferred: not in the decision";
      auto it = planned.find(expected.job);
      if (it == planned.end()) {
        EXPECT_FALSE(expected.eta.has_value()) << "job " << Value(expected.job);
        continue;
      }
      EXPECT_EQ(it->second.eta, expected.eta) << "seed " << seed << " job " << Value(expected.job);
      EXPECT_EQ(it->second.after_job, expected.after_job) << "job " << Value(expected.job);
      with_eta += expected.eta.has_value();
    }
    EXPECT_GT(with_eta, 0) << "seed " << seed;
  }
}

TEST_P(EtaPlanTest, ThePlanDoesNotReadTheStateItCameFrom) {
  const Policy policy = PolicyUnderTest();
  const RandomScenario scenario = MakeRandomScenario(3, 10, 200);
  std::unique_ptr<ClusterState> state = Busy(scenario, policy, 2000);
  DecideOptions deferred{ExplainLevel::kFull};
  deferred.defer_etas = true;
  Decision decision = Decide(*state, At(2000), policy, deferred);
  ASSERT_TRUE(decision.eta_plan.has_value());
  const EtaPlan copy = *decision.eta_plan;
  const std::vector<PlannedEta> before = PlanEtas(copy);

  // The state moves on: nodes join (the node table grows and may move),
  // running work ends, the queue empties.
  for (int i = 0; i < 50; ++i) {
    state->AddNode(MakeNodeSpec("late" + std::to_string(i), "V100", 8));
  }
  std::vector<JobId> live;
  for (const auto& [id, job] : state->running()) live.push_back(id);
  for (JobId id : live) state->Finish(id, At(2100));
  live.clear();
  for (const auto& [id, job] : state->pending()) live.push_back(id);
  for (JobId id : live) state->Cancel(id, At(2100));

  const std::vector<PlannedEta> after = PlanEtas(*decision.eta_plan);
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].job, before[i].job);
    EXPECT_EQ(after[i].eta, before[i].eta);
  }
}

// Issue 30 (live): what time limits guarantee. One node of 4 GPUs; each
// job takes all of it and is expected to run 100 s.
TEST(EtaPlanBoundTest, TimeLimitsBoundTheStartsOfTheJobsBehindThem) {
  const auto plan = [](bool running_has_limit) {
    ClusterState state;
    testing::AddNodes(state, 1, 4);
    JobSpec running = testing::NewJob(1).Gpus(4);
    if (running_has_limit) running.time_limit = Secs(1000);
    running.grace = Secs(30);
    state.Submit(running, At(0));
    state.Start(running.id, Placement{running.task, {TaskPlacement{testing::N(0), 0xF}}}, At(0));
    state.Submit(testing::NewJob(2).Gpus(4).Limit(500).Submit(1), At(1));
    state.Submit(testing::NewJob(3).Gpus(4).Submit(2), At(2));  // no time limit
    state.Submit(testing::NewJob(4).Gpus(4).Limit(500).Submit(3), At(3));
    const Policy policy = testing::NamedPolicy(
        "fifo", std::make_shared<testing::TableEstimator>(std::map<JobId, Duration>{}, Secs(100)));
    DecideOptions options{ExplainLevel::kFull};
    options.defer_etas = true;
    Decision decision = Decide(state, At(10), policy, options);
    return ById(PlanEtas(decision.eta_plan.value()));
  };
  std::map<JobId, PlannedEta> bounded = plan(true);
  EXPECT_EQ(bounded[Id(2)].eta, At(100));
  EXPECT_EQ(bounded[Id(2)].latest, At(1030)) << "the running job's limit and grace";
  EXPECT_EQ(bounded[Id(3)].eta, At(200));
  EXPECT_EQ(bounded[Id(3)].latest, At(1530)) << "then job 2's limit";
  EXPECT_EQ(bounded[Id(4)].eta, At(300));
  EXPECT_EQ(bounded[Id(4)].latest, std::nullopt) << "job 3 ahead of it has no limit";

  std::map<JobId, PlannedEta> unbounded = plan(false);
  EXPECT_EQ(unbounded[Id(2)].eta, At(100));
  EXPECT_EQ(unbounded[Id(2)].latest, std::nullopt) << "the running job has no limit";
}

// One 8-GPU node, all of it held by job 1 until t=3600 by its expected
// end; `waiting` 8-GPU jobs queued behind it in order, each expected to run
// 100 s.
EtaPlan OneBusyNode(int waiting) {
  auto nodes = std::make_shared<NodeTable>();
  nodes->Add(MakeNodeSpec("n0", "H100", 8));
  Capacity capacity(nodes.get());
  capacity.SyncNodes();
  Placement busy;
  busy.shape.gpu = WholeGpus(8);
  busy.tasks.push_back(TaskPlacement{NodeId{0}, 0xff});
  capacity.Allocate(busy);
  EtaPlan plan{At(0), Discipline::kStrict, nodes, capacity, {}, {}, {}};
  plan.ends.push_back({At(3600), Id(1), busy});
  for (int i = 0; i < waiting; ++i) {
    PlacementRequest request;
    request.tasks = 1;
    request.shape.gpu = WholeGpus(8);
    plan.queue.push_back({Id(2 + i), request, Secs(100)});
  }
  return plan;
}

// Issue 30, item 3: where the estimator knows how run times spread, the
// plan is replayed once per quantile and each job is told its median
// start. The running job ends after 60 s, 120 s or an hour, equally
// likely: the plan on expected ends says an hour; two replays of three
// start the waiting job within two minutes.
TEST(EtaReplayTest, AJobIsToldTheMedianOfItsReplaysStarts) {
  EtaPlan plan = OneBusyNode(1);
  plan.ends[0].remaining_quantiles = {Secs(60), Secs(120), Secs(3600)};
  EXPECT_EQ(PlanEtas(plan)[0].eta, At(3600)) << "one replay: the expected end";
  plan.replays = 3;
  const std::vector<PlannedEta> etas = PlanEtas(plan);
  EXPECT_EQ(etas[0].eta, At(120));
  EXPECT_EQ(etas[0].after_job, Id(1));
}

// A waiting job's own run time is drawn too: the second job waits for the
// first to run 10 s, 20 s or 1,000 s after the running one ends at 100 s.
TEST(EtaReplayTest, TheJobsAheadRunTheirDrawnRunTimes) {
  EtaPlan plan = OneBusyNode(2);
  plan.ends[0].at = At(100);
  plan.queue[0].remaining_quantiles = {Secs(10), Secs(20), Secs(1000)};
  plan.replays = 3;
  const std::vector<PlannedEta> etas = PlanEtas(plan);
  EXPECT_EQ(etas[0].eta, At(100));
  EXPECT_EQ(etas[1].eta, At(120));
  EXPECT_EQ(etas[1].after_job, Id(2));
}

// Without quantiles (estimators that know no distribution: time limits, the
// oracles) every replay would be the same plan: it runs once.
TEST(EtaReplayTest, WithoutQuantilesTheReplaysAreThePlan) {
  EtaPlan plan = OneBusyNode(2);
  plan.replays = 9;
  const std::vector<PlannedEta> etas = PlanEtas(plan);
  EXPECT_EQ(etas[0].eta, At(3600));
  EXPECT_EQ(etas[1].eta, At(3700));
}

// The policy's replays while they fit 200,000 replayed steps; past that,
// as many as fit, and once fewer than three fit, the one plan.
TEST(EtaReplayTest, ALongQueueGetsFewerReplays) {
  EXPECT_EQ(EtaReplays(9, 0), 9);
  EXPECT_EQ(EtaReplays(9, 10'000), 9);
  EXPECT_EQ(EtaReplays(9, 40'000), 5);
  EXPECT_EQ(EtaReplays(9, 70'000), 1) << "two replays have no median";
  EXPECT_EQ(EtaReplays(1, 10), 1);
}

// The Berth policy's plan carries each run time's quantiles from what its
// predictor learned; before anything finished it knows no distribution
// and plans once.
TEST(EtaReplayTest, APredictingPolicyPlansOnItsLearnedQuantiles) {
  ClusterState state;
  testing::AddNodes(state, 1, 4);
  const JobSpec running = testing::NewJob(1).Gpus(4);
  state.Submit(running, At(0));
  state.Start(running.id, Placement{running.task, {TaskPlacement{testing::N(0), 0xF}}}, At(0));
  state.Submit(testing::NewJob(2).Gpus(4).Submit(1), At(1));
  DecideOptions options{ExplainLevel::kFull};
  options.defer_etas = true;
  Policy policy = MakePolicy("berth", InSimulation()).value();

  const Decision cold = Decide(state, At(10), policy, options);
  ASSERT_TRUE(cold.eta_plan.has_value());
  EXPECT_TRUE(cold.eta_plan->ends[0].remaining_quantiles.empty());
  EXPECT_TRUE(cold.eta_plan->queue[0].remaining_quantiles.empty());

  for (int i = 0; i < 20; ++i) {
    policy.predictor->Observe(testing::NewJob(100 + i).Gpus(4), Secs(100 * (i + 1)));
  }
  const Decision learned = Decide(state, At(10), policy, options);
  ASSERT_TRUE(learned.eta_plan.has_value());
  EXPECT_EQ(learned.eta_plan->replays, 9);
  EXPECT_EQ(learned.eta_plan->ends[0].remaining_quantiles.size(), 9u);
  EXPECT_EQ(learned.eta_plan->queue[0].remaining_quantiles.size(), 9u);
  const std::vector<Duration>& quantiles = learned.eta_plan->queue[0].remaining_quantiles;
  EXPECT_TRUE(std::is_sorted(quantiles.begin(), quantiles.end()));
  EXPECT_LT(quantiles.front(), quantiles.back()) << "spread over the learned run times";
  EXPECT_GE(quantiles.front(), Secs(100));
  EXPECT_LE(quantiles.back(), Secs(2000));
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, EtaPlanTest,
                         ::testing::Values("fifo", "sjf-oracle", "srtf-oracle", "las", "slurm",
                                           "qssf", "berth", "berth-gittins", "berth-oracle"));

}  // namespace
}  // namespace berth::core
