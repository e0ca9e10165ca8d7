// The same input gives the same Decision, whatever order it arrived in.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/decide.h"
#include "core/random_scenario.h"
#include "core/test_builders.h"

namespace berth::core {
namespace {

using testing::At;
using testing::MakeRandomScenario;
using testing::RandomScenario;

// Builds a state: nodes in the scenario's order, jobs submitted in
// `job_order`, and the first `running` jobs (in id order) started by fifo.
std::unique_ptr<ClusterState> Build(const RandomScenario& scenario,
                                    const std::vector<size_t>& job_order) {
  auto state = std::make_unique<ClusterState>();
  for (const NodeSpec& node : scenario.nodes) state->AddNode(node);
  for (size_t i : job_order) state->Submit(scenario.jobs[i], scenario.jobs[i].submit_time);
  return state;
}

bool SameDecision(const Decision& a, const Decision& b) {
  if (a.starts.size() != b.starts.size() || a.preemptions.size() != b.preemptions.size() ||
      a.reservations.size() != b.reservations.size() || a.pending.size() != b.pending.size() ||
      a.next_decision != b.next_decision) {
    return false;
  }
  for (size_t i = 0; i < a.starts.size(); ++i) {
    if (a.starts[i].job != b.starts[i].job || !(a.starts[i].placement == b.starts[i].placement) ||
        a.starts[i].preempts != b.starts[i].preempts) {
      return false;
    }
  }
  for (size_t i = 0; i < a.preemptions.size(); ++i) {
    if (a.preemptions[i].job != b.preemptions[i].job) return false;
  }
  for (size_t i = 0; i < a.reservations.size(); ++i) {
    if (a.reservations[i].job != b.reservations[i].job ||
        a.reservations[i].start != b.reservations[i].start ||
        !(a.reservations[i].placement == b.reservations[i].placement)) {
      return false;
    }
  }
  for (size_t i = 0; i < a.pending.size(); ++i) {
    const PendingJob& x = a.pending[i];
    const PendingJob& y = b.pending[i];
    if (x.job != y.job || x.reason != y.reason || x.position != y.position ||
        x.blocker != y.blocker || x.eta != y.eta || x.after_job != y.after_job) {
      return false;
    }
  }
  return true;
}

class DeterminismTest : public ::testing::TestWithParam<std::string_view> {};

TEST_P(DeterminismTest, SameInputSameDecisionWhateverTheSubmitOrder) {
  const RandomScenario scenario = MakeRandomScenario(7, 12, 120);
  std::vector<size_t> in_order(scenario.jobs.size());
  for (size_t i = 0; i < in_order.size(); ++i) in_order[i] = i;
  std::vector<size_t> shuffled = in_order;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(99));

  auto first = Build(scenario, in_order);
  auto again = Build(scenario, in_order);
  auto permuted = Build(scenario, shuffled);
  Policy policy =
      testing::NamedPolicy(GetParam(), std::make_shared<UserLimitEstimator>(Duration::Days(1)));
  const DecideOptions full{ExplainLevel::kFull};

  // Several rounds: decide, apply, advance, so running jobs and preemption
  // candidates exist too.
  for (int round = 0; round < 6; ++round) {
    const Time now = At(200 * (round + 1));
    const Decision a = Decide(*first, now, policy, full);
    const Decision b = Decide(*again, now, policy, full);
    const Decision c = Decide(*permuted, now, policy, full);
    ASSERT_TRUE(SameDecision(a, b)) << "round " << round;
    ASSERT_TRUE(SameDecision(a, c)) << "round " << round;
    testing::Apply(*first, a, now);
    testing::Apply(*again, b, now);
    testing::Apply(*permuted, c, now);
  }
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, DeterminismTest,
                         ::testing::Values("fifo", "sjf-oracle", "srtf-oracle", "las", "slurm",
                                           "qssf", "berth", "berth-gittins", "berth-oracle"));

}  // namespace
}  // namespace berth::core
