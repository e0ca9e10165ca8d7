#include "core/decide.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "common/check.h"
#include "core/cycle.h"
#include "core/eta.h"
#include "core/placer.h"

namespace berth::core {
namespace {

// Step 1: pending jobs that could fit the cluster become candidates; the
// rest are set aside so they never block anyone. Feasibility depends only on
// the request and the node table, so it is computed once per distinct request.
void CollectCandidates(Cycle& cycle) {
  using RequestKey = std::tuple<std::optional<GpuTypeId>, int32_t, TaskShape>;
  std::map<RequestKey, bool> fits_cache;
  const NodeTable& nodes = cycle.state.nodes();
  cycle.order.reserve(cycle.state.pending().size());
  for (const auto& [id, job] : cycle.state.pending()) {
    const ResolvedRequest resolved = ResolveRequest(nodes, job->spec);
    bool fits = resolved.known_type;
    if (fits) {
      const PlacementRequest& r = resolved.request;
      auto [it, inserted] = fits_cache.try_emplace(RequestKey{r.type, r.tasks, r.shape}, false);
      if (inserted) it->second = FitsEmptyCluster(nodes, r);
      fits = it->second;
    }
    if (fits) {
      Candidate candidate;
      candidate.job = job;
      candidate.request = resolved.request;
      cycle.order.push_back(std::move(candidate));
    } else {
      cycle.never_fit.push_back(job);
    }
  }
}

// Step 2: the policy's order; equal keys fall back to the job id. Sorts
// small (key, id, index) records and permutes once: candidates are large.
void OrderCandidates(Cycle& cycle) {
  std::vector<const Job*> jobs;
  jobs.reserve(cycle.order.size());
  for (const Candidate& candidate : cycle.order) jobs.push_back(candidate.job);
  std::vector<OrderKey> keys;
  cycle.policy.orderer->Keys(jobs, cycle.order_context(), keys);
  BERTH_CHECK(keys.size() == jobs.size());

  struct Ranked {
    OrderKey key;
    JobId id;
    size_t index;
  };
  std::vector<Ranked> ranked;
  ranked.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) ranked.push_back({keys[i], jobs[i]->spec.id, i});
  std::sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
    if (a.key != b.key) return a.key < b.key;
    return a.id < b.id;
  });
  std::vector<Candidate> ordered;
  ordered.reserve(ranked.size());
  for (const Ranked& r : ranked) {
    ordered.push_back(std::move(cycle.order[r.index]));
    ordered.back().key = r.key;
  }
  cycle.order = std::move(ordered);
}

// Step 4: a reason and position for every job left pending.
void Explain(Cycle& cycle) {
  cycle.decision.pending.reserve(cycle.order.size() + cycle.never_fit.size() +
                                 cycle.state.held().size());
  int64_t position = 0;
  for (const Candidate& candidate : cycle.order) {
    if (candidate.started) continue;
    cycle.decision.pending.push_back(PendingJob{
        candidate.job->spec.id, candidate.reason, position++, candidate.blocker, {}, {}});
  }
  for (const Job* job : cycle.never_fit) {
    cycle.decision.pending.push_back(
        PendingJob{job->spec.id, ReasonCode::kInfeasible, position++, {}, {}, {}});
  }
  for (const auto& [id, job] : cycle.state.held()) {
    cycle.decision.pending.push_back(PendingJob{id, ReasonCode::kHeld, position++, {}, {}, {}});
  }
  if (cycle.explain == ExplainLevel::kFull) PlanEtas(cycle);
}

}  // namespace

// Head-of-line blocking: the first job that does not fit stops the line.
void RunStrict(Cycle& cycle) {
  for (size_t i = 0; i < cycle.order.size(); ++i) {
    Candidate& candidate = cycle.order[i];
    if (!cycle.QuotaAllows(candidate)) continue;
    if (std::optional<Placement> placement = cycle.PlaceOn(cycle.work, candidate.request)) {
      cycle.Start(candidate, std::move(*placement));
      continue;
    }
    cycle.Blocked(candidate, cycle.work);
    if (!cycle.explaining()) return;
    for (size_t j = i + 1; j < cycle.order.size(); ++j) {
      Candidate& behind = cycle.order[j];
      if (!cycle.QuotaAllows(behind)) continue;
      behind.reason = ReasonCode::kPriority;
      behind.blocker = candidate.job->spec.id;
    }
    return;
  }
}

FragmentationModel WaitingWorkload(const ClusterState& state) {
  std::vector<WorkloadShape> workload;
  for (const auto& [waiting, tasks] : state.waiting_shapes()) {
    WorkloadShape shape{waiting.task, std::nullopt, tasks};
    if (!waiting.gpu_type.empty()) {
      shape.type = state.nodes().FindType(waiting.gpu_type);
      if (!shape.type) continue;  // no node has the model: it needs no room here
    }
    workload.push_back(shape);
  }
  return FragmentationModel(workload);
}

Decision Decide(const ClusterState& state, Time now, const Policy& policy,
                const DecideOptions& options) {
  BERTH_CHECK(policy.runtimes != nullptr) << "policy " << policy.name << " has no estimator";
  Cycle cycle(state, now, policy, options.explain);
  CollectCandidates(cycle);
  OrderCandidates(cycle);
  switch (policy.discipline) {
    case Discipline::kStrict:
      RunStrict(cycle);
      break;
    case Discipline::kBackfill:
      RunBackfill(cycle);
      break;
    case Discipline::kPreemptive:
      RunPreemptive(cycle);
      break;
    case Discipline::kPreemptiveBackfill:
      RunPreemptiveBackfill(cycle);
      break;
  }
  if (cycle.explaining()) Explain(cycle);
  cycle.decision.next_decision = policy.orderer->NextKeyChange(cycle.order_context());
  return std::move(cycle.decision);
}

}  // namespace berth::core
