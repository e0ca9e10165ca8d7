// Invariant loops over seeded random workloads, for every policy: no GPU
// over-allocated, gangs whole, backfill never delays the reservation, ETAs
// never in the past, only allowed victims preempted.
#include <gtest/gtest.h>

#include <map>
#include <queue>
#include <random>
#include <set>
#include <tuple>

#include "core/decide.h"
#include "core/node_filters.h"
#include "core/placement_request.h"
#include "core/random_scenario.h"
#include "core/test_builders.h"

namespace berth::core {
namespace {

using testing::MakeRandomScenario;
using testing::RandomScenario;

// run_starts() lists the running jobs in the same order, each with the
// start of its current run.
void ExpectRunStartsFollowRunning(const ClusterState& state) {
  ASSERT_EQ(state.run_starts().size(), state.running().size());
  size_t i = 0;
  for (const auto& [id, job] : state.running()) {
    const ClusterState::RunStart& run = state.run_starts()[i++];
    ASSERT_EQ(run.id, id);
    ASSERT_EQ(run.started, job->started) << "job " << Value(id);
  }
}

// Recomputes every node's use from the running jobs and checks it against
// the node's capacity: whole GPUs held once, shares summing to <= 1000.
void ExpectNoOverAllocation(const ClusterState& state) {
  std::map<std::pair<NodeId, int>, int64_t> milli;
  std::map<NodeId, int64_t> memory;
  for (const auto& [id, job] : state.running()) {
    ASSERT_EQ(job->placement.tasks.size(), static_cast<size_t>(job->spec.tasks))
        << "gang " << Value(id) << " is not whole";
    for (const TaskPlacement& task : job->placement.tasks) {
      const int64_t per_device = job->spec.task.wants_share() ? job->spec.task.gpu.value() : 1000;
      ASSERT_EQ(CountGpus(task.gpus),
                job->spec.task.wants_share() ? 1 : job->spec.task.whole_gpus());
      for (GpuMask bits = task.gpus; bits != 0; bits &= bits - 1) {
        milli[{task.node, std::countr_zero(bits)}] += per_device;
      }
      memory[task.node] += job->spec.task.memory.value();
    }
  }
  for (const auto& [device, used] : milli) {
    EXPECT_LE(used, 1000) << "node " << Value(device.first) << " gpu " << device.second;
  }
  for (const auto& [node, used] : memory) {
    EXPECT_LE(used, state.nodes().spec(node).memory.value());
  }
}

// Every task of a running job, and every reserved placement, is on a node
// its constraints allow.
void ExpectConstraintsHold(const ClusterState& state, const Decision& decision) {
  auto check = [&](const Placement& placement, const JobSpec& spec) {
    const ResolvedRequest request_resolved = ResolveRequest(state.nodes(), spec);
    const PlacementRequest& request = request_resolved.request;
    for (const TaskPlacement& task : placement.tasks) {
      EXPECT_FALSE(StaticFilters(state.nodes(), task.node, request))
          << "job " << Value(spec.id) << " on node " << Value(task.node);
      if (spec.gpu_locality == GpuLocality::kOneGroup && task.gpus != 0) {
        EXPECT_EQ(TasksInOneGroup(state.nodes().spec(task.node), task.gpus, CountGpus(task.gpus)),
                  1)
            << "job " << Value(spec.id) << "'s task spans interconnect groups";
      }
    }
  };
  for (const auto& [id, job] : state.running()) check(job->placement, job->spec);
  for (const Reservation& reservation : decision.reservations) {
    check(reservation.placement, state.Get(reservation.job).spec);
  }
}

class InvariantsTest
    : public ::testing::TestWithParam<std::tuple<std::string_view, testing::Constraints>> {};

TEST_P(InvariantsTest, HoldOverRandomWorkloads) {
  const auto [policy_name, constraints] = GetParam();
  // What the workloads exercised, so the loop cannot pass vacuously.
  int64_t starts = 0;
  int64_t preemptions = 0;
  int64_t backfills = 0;
  size_t reserved_with_known_ends = 0;
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    const RandomScenario scenario = MakeRandomScenario(seed, 10, 150, constraints);
    ClusterState state;
    for (const NodeSpec& node : scenario.nodes) state.AddNode(node);
    Policy policy =
        testing::NamedPolicy(policy_name, std::make_shared<UserLimitEstimator>(Duration::Days(1)));

    // True run time: a seeded fraction of the limit, so limits hold.
    std::mt19937 rng(seed);
    std::map<JobId, Duration> actual;
    for (const JobSpec& job : scenario.jobs) {
      actual[job.id] = *job.time_limit * std::uniform_int_distribution<int>(1, 10)(rng) / 10;
    }
    using End = std::pair<Time, JobId>;
    std::priority_queue<End, std::vector<End>, std::greater<>> ends;
    std::map<JobId, Time> end_of;
    size_t next_arrival = 0;
    std::optional<QueueOrder> order;
    for (int step = 0; step < 400; ++step) {
      Time now = Time::Infinite();
      if (next_arrival < scenario.jobs.size()) now = scenario.jobs[next_arrival].submit_time;
      if (!ends.empty()) now = Min(now, ends.top().first);
      if (now.is_infinite()) break;
      while (!ends.empty() && ends.top().first == now) {
        const JobId id = ends.top().second;
        ends.pop();
        if (end_of.contains(id) && end_of[id] == now) {
          state.Finish(id, now);
          end_of.erase(id);
        }
      }
      while (next_arrival < scenario.jobs.size() &&
             scenario.jobs[next_arrival].submit_time == now) {
        state.Submit(scenario.jobs[next_arrival], now);
        ++next_arrival;
      }

      // Cycles that reuse an order plan reservations with the ends its full
      // cycle expected; with a fixed estimator those are exactly the ends
      // estimated afresh, runs started since and started again included.
      if (step % 5 == 0) {
        DecideOptions keep;
        keep.keep_order = true;
        order = Decide(state, now, policy, keep).order;
      } else if (order) {
        QueueOrder estimated = *order;
        estimated.ends.clear();
        DecideOptions reuse;
        reuse.depth = 3;
        reuse.reuse = &*order;
        const Decision with_known = Decide(state, now, policy, reuse);
        reuse.reuse = &estimated;
        const Decision with_estimated = Decide(state, now, policy, reuse);
        ASSERT_EQ(with_known.reservations.size(), with_estimated.reservations.size());
        for (size_t i = 0; i < with_known.reservations.size(); ++i) {
          EXPECT_EQ(with_known.reservations[i].job, with_estimated.reservations[i].job);
          EXPECT_EQ(with_known.reservations[i].start, with_estimated.reservations[i].start);
        }
        EXPECT_EQ(testing::StartedIds(with_known), testing::StartedIds(with_estimated));
        if (with_known.partial) reserved_with_known_ends += with_known.reservations.size();
      }

      const Decision decision = Decide(state, now, policy, DecideOptions{ExplainLevel::kFull});
      for (const PendingJob& pending : decision.pending) {
        if (pending.eta) {
          EXPECT_GE(*pending.eta, now);
        }
      }
      for (const Preemption& preemption : decision.preemptions) {
        const Job* victim = state.Find(preemption.job);
        ASSERT_NE(victim, nullptr);
        ASSERT_TRUE(victim->running());
        if (policy.preemption_scope == PreemptionScope::kPreemptibleOnly) {
          EXPECT_TRUE(victim->spec.preemptible);
        }
      }
      starts += static_cast<int64_t>(decision.starts.size());
      preemptions += static_cast<int64_t>(decision.preemptions.size());
      if (!decision.reservations.empty()) {
        for (const JobStart& start : decision.starts) {
          const Job& job = state.Get(start.job);
          const Job& reserved = state.Get(decision.reservations.front().job);
          if (job.spec.submit_time > reserved.spec.submit_time) {
            ++backfills;  // started although submitted after the reserved job
          }
        }
      }
      // A job told it can never start could not fit the empty cluster;
      // one told it waits for room could.
      for (const PendingJob& pending : decision.pending) {
        if (pending.reason != ReasonCode::kInfeasible && pending.reason != ReasonCode::kResources &&
            pending.reason != ReasonCode::kFragmentation &&
            pending.reason != ReasonCode::kNodesUnavailable) {
          continue;
        }
        const ResolvedRequest resolved = ResolveRequest(state.nodes(), state.Get(pending.job).spec);
        EXPECT_EQ(FitsEmptyCluster(state.nodes(), resolved.request),
                  pending.reason != ReasonCode::kInfeasible)
            << "job " << Value(pending.job) << " " << ReasonName(pending.reason);
      }
      testing::Apply(state, decision, now);  // Start() re-checks every placement
      ExpectNoOverAllocation(state);
      ExpectConstraintsHold(state, decision);
      ExpectRunStartsFollowRunning(state);

      if (!decision.reservations.empty()) {
        // Backfill must not have delayed the promise: with the decision
        // applied and everyone else held, the reserved job starts now or is
        // promised no later. (Holding the others isolates the promise from
        // jobs that rank above it now, such as requeued victims.)
        const Reservation& promised = decision.reservations.front();
        std::vector<JobId> others;
        for (const auto& [id, job] : state.pending()) {
          if (id != promised.job) others.push_back(id);
        }
        for (JobId id : others) state.Hold(id);
        const Decision again = Decide(state, now, policy, DecideOptions{ExplainLevel::kNone});
        for (JobId id : others) state.Release(id);
        bool started = false;
        for (const JobStart& start : again.starts) started |= start.job == promised.job;
        if (!started) {
          ASSERT_EQ(again.reservations.size(), 1u);
          EXPECT_EQ(again.reservations.front().job, promised.job);
          EXPECT_LE(again.reservations.front().start, promised.start);
        }
      }
      for (const Preemption& preemption : decision.preemptions) end_of.erase(preemption.job);
      for (const JobStart& start : decision.starts) {
        const Job& job = state.Get(start.job);
        const Time end = now + Max(Duration::Micros(1), actual[start.job] - job.executed);
        end_of[start.job] = end;
        ends.emplace(end, start.job);
      }
    }
  }
  EXPECT_GT(starts, 500);
  if (policy_name == "srtf-oracle" || policy_name == "las" || policy_name == "berth") {
    EXPECT_GT(preemptions, 0);
  }
  if (policy_name == "slurm" || policy_name == "berth") {
    EXPECT_GT(backfills, 0);
    EXPECT_GT(reserved_with_known_ends, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, InvariantsTest,
                         ::testing::Combine(::testing::Values("fifo", "sjf-oracle", "srtf-oracle",
                                                              "las", "slurm", "qssf", "berth"),
                                            ::testing::Values(testing::Constraints::kNone,
                                                              testing::Constraints::kSome)));

}  // namespace
}  // namespace berth::core
