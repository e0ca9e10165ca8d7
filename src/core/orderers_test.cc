#include "core/orderers.h"

#include <gtest/gtest.h>

#include "core/multifactor_orderer.h"
#include "core/placer.h"
#include "core/test_builders.h"

namespace berth::core {
namespace {

using testing::AddNodes;
using testing::At;
using testing::Id;
using testing::NewJob;
using testing::Secs;
using testing::TableEstimator;

// Job ids in the order the orderer ranks them at `now`.
std::vector<int64_t> Rank(const Orderer& orderer, const ClusterState& state, Time now,
                          const RuntimeEstimator& runtimes, std::vector<const Job*> jobs) {
  std::vector<OrderKey> keys;
  const FairShare fair_share(state, now);
  orderer.Keys(jobs, OrderContext{state, now, runtimes, &fair_share}, keys);
  std::vector<size_t> index(jobs.size());
  for (size_t i = 0; i < index.size(); ++i) index[i] = i;
  std::sort(index.begin(), index.end(), [&](size_t a, size_t b) {
    if (keys[a] != keys[b]) return keys[a] < keys[b];
    return jobs[a]->spec.id < jobs[b]->spec.id;
  });
  std::vector<int64_t> ids;
  for (size_t i : index) ids.push_back(Value(jobs[i]->spec.id));
  return ids;
}

std::vector<const Job*> Pending(const ClusterState& state) {
  std::vector<const Job*> jobs;
  for (const auto& [id, job] : state.pending()) jobs.push_back(job);
  return jobs;
}

void StartOn(ClusterState& state, JobId id, Time now) {
  const Job& job = state.Get(id);
  state.Start(id, *Place(state.capacity(), ResolveRequest(state.nodes(), job.spec).request), now);
}

TEST(OrderersTest, FifoIsArrivalOrderWithinPriorityClass) {
  ClusterState state;
  AddNodes(state, 1, 8);
  state.Submit(NewJob(1).Submit(30), At(30));
  state.Submit(NewJob(2).Submit(10), At(10));
  state.Submit(NewJob(3).Submit(20).Priority(5), At(20));
  state.Submit(NewJob(4).Submit(10), At(10));
  UserLimitEstimator runtimes(Duration::Days(1));
  EXPECT_EQ(Rank(FifoOrderer(), state, At(40), runtimes, Pending(state)),
            (std::vector<int64_t>{3, 2, 4, 1}));
}

TEST(OrderersTest, ShortestFirstUsesTheEstimator) {
  ClusterState state;
  AddNodes(state, 1, 8);
  for (int64_t id = 1; id <= 3; ++id) state.Submit(NewJob(id).Submit(id), At(id));
  TableEstimator runtimes({{Id(1), Secs(300)}, {Id(2), Secs(100)}, {Id(3), Secs(200)}});
  EXPECT_EQ(Rank(ShortestFirstOrderer(ShortestFirstOrderer::Measure::kTotal), state, At(10),
                 runtimes, Pending(state)),
            (std::vector<int64_t>{2, 3, 1}));
}

TEST(OrderersTest, RemainingTimeShrinksWhileRunning) {
  ClusterState state;
  AddNodes(state, 1, 8);
  state.Submit(NewJob(1), At(0));
  state.Submit(NewJob(2), At(0));
  TableEstimator runtimes({{Id(1), Secs(1000)}, {Id(2), Secs(500)}});
  StartOn(state, Id(1), At(0));
  std::vector<const Job*> jobs = {&state.Get(Id(1)), &state.Get(Id(2))};
  const ShortestFirstOrderer srtf(ShortestFirstOrderer::Measure::kRemaining);
  EXPECT_EQ(Rank(srtf, state, At(100), runtimes, jobs), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(Rank(srtf, state, At(600), runtimes, jobs), (std::vector<int64_t>{1, 2}));
}

TEST(OrderersTest, LasDemotesJobsPastTheThreshold) {
  ClusterState state;
  AddNodes(state, 1, 8);
  state.Submit(NewJob(1).Gpus(4).Submit(0), At(0));
  state.Submit(NewJob(2).Gpus(1).Submit(50), At(50));
  StartOn(state, Id(1), At(0));
  UserLimitEstimator runtimes(Duration::Days(1));
  const LasOrderer las({18000});
  std::vector<const Job*> jobs = {&state.Get(Id(1)), &state.Get(Id(2))};
  // 4 GPUs cross 18,000 GPU-seconds after 4,500 s.
  EXPECT_EQ(Rank(las, state, At(4499), runtimes, jobs), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Rank(las, state, At(4501), runtimes, jobs), (std::vector<int64_t>{2, 1}));

  const std::optional<Time> change = las.NextKeyChange(OrderContext{state, At(1000), runtimes});
  ASSERT_TRUE(change);
  EXPECT_GT(*change, At(4500));
  EXPECT_LT(*change, At(4500) + Secs(1));
}

TEST(OrderersTest, MultifactorFavoursAgeAndLightQueues) {
  ClusterState state(ClusterOptions{Duration::Days(7)});
  AddNodes(state, 1, 8);
  // Queue "heavy" used 8 GPUs for a day; "light" nothing.
  state.Submit(NewJob(100).Gpus(8).Queue("heavy"), At(0));
  StartOn(state, Id(100), At(0));
  state.Finish(Id(100), At(86400));

  state.Submit(NewJob(1).Queue("heavy").Submit(86400), At(86400));
  state.Submit(NewJob(2).Queue("light").Submit(86400), At(86400));
  TimeLimitEstimator runtimes(Duration::Days(60));
  const MultifactorOrderer multifactor(MultifactorWeights{});
  EXPECT_EQ(Rank(multifactor, state, At(86400), runtimes, Pending(state)),
            (std::vector<int64_t>{2, 1}));

  // Age outweighs fair share once the heavy job has waited long enough: a
  // new light job at day 8 is younger than job 1 by a week.
  state.Submit(NewJob(3).Queue("light").Submit(8 * 86400), At(8 * 86400));
  const std::vector<int64_t> later =
      Rank(multifactor, state, At(8 * 86400), runtimes, Pending(state));
  EXPECT_EQ(later.front(), 2);
  EXPECT_EQ(later.back(), 3);
}

}  // namespace
}  // namespace berth::core
