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
class Feasibility {
 public:
  Feasibility(const NodeTable& nodes, RequestResolver& resolver)
      : nodes_(nodes), resolver_(resolver) {}
  Feasibility(const Feasibility&) = delete;
  Feasibility& operator=(const Feasibility&) = delete;

  struct Admission {
    PlacementRequest request;
    bool can_fit = false;
  };
  Admission Admit(const Job& job) {
    PlacementRequest request = resolver_.Resolve(job.spec);
    auto [it, inserted] = fits_.try_emplace(
        RequestKey{request.type, request.eligibility, request.locality, request.spread,
                   request.tasks, request.shape, request.task_shapes.get()},
        false);
    if (inserted) it->second = FitsEmptyCluster(nodes_, request);
    return Admission{std::move(request), it->second};
  }

 private:
  // Requests of one set of constraints share their eligibility (the
  // resolver's memory), so its address tells constraints apart; a job
  // whose tasks differ in shape has shapes of its own.
  using RequestKey = std::tuple<std::optional<GpuTypeId>, const NodeEligibility*, GpuLocality,
                                NodeSpread, int32_t, TaskShape, const std::vector<TaskShape>*>;
  const NodeTable& nodes_;
  RequestResolver& resolver_;
  std::map<RequestKey, bool> fits_;
};

void Collect(Cycle& cycle, Feasibility& feasible, const Job* job, std::vector<Candidate>& out) {
  Feasibility::Admission admission = feasible.Admit(*job);
  if (!admission.can_fit) {
    cycle.never_fit.push_back(job);
    return;
  }
  Candidate candidate;
  candidate.job = job;
  candidate.request = std::move(admission.request);
  out.push_back(std::move(candidate));
}

// Step 2: the policy's order; equal keys fall back to the job id. Sorts
// small (key, id, index) records and permutes once: candidates are large.
void Rank(const Cycle& cycle, std::vector<Candidate>& candidates) {
  std::vector<const Job*> jobs;
  jobs.reserve(candidates.size());
  for (const Candidate& candidate : candidates) jobs.push_back(candidate.job);
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
    ordered.push_back(std::move(candidates[r.index]));
    ordered.back().key = r.key;
  }
  candidates = std::move(ordered);
}

// Steps 1-2 over the whole queue.
void RankAll(Cycle& cycle) {
  Feasibility feasible(cycle.state.nodes(), cycle.resolver);
  cycle.order.reserve(cycle.state.pending().size());
  for (const auto& [id, job] : cycle.state.pending()) Collect(cycle, feasible, job, cycle.order);
  Rank(cycle, cycle.order);
}

// Steps 1-2 for the front of the queue only (DecideOptions::reuse): the
// jobs of an earlier order still pending, in that order, merged with the
// jobs that became pending since (ranked now), up to `depth` candidates.
void RankFront(Cycle& cycle, const QueueOrder& reuse, size_t depth) {
  Feasibility feasible(cycle.state.nodes(), cycle.resolver);
  // Arrivals: pending now, unknown then (submitted, released from hold or
  // requeued since). Both lists ascend by id: one merge, which also finds
  // which known jobs still pend (a lookup by id per ranked job would be a
  // walk down a tree of every live job).
  std::vector<Candidate> arrivals;
  std::vector<const Job*> still_pending(reuse.known.size(), nullptr);
  auto known = reuse.known.begin();
  for (const auto& [id, job] : cycle.state.pending()) {
    while (known != reuse.known.end() && *known < id) ++known;
    if (known != reuse.known.end() && *known == id) {
      still_pending[static_cast<size_t>(known - reuse.known.begin())] = job;
    } else {
      Collect(cycle, feasible, job, arrivals);
    }
  }
  Rank(cycle, arrivals);

  cycle.order.reserve(std::min(depth, reuse.ranked.size() + arrivals.size()));
  size_t next = 0;  // the first arrival not taken yet
  for (const RankedJob& ranked : reuse.ranked) {
    while (next < arrivals.size() && cycle.order.size() < depth &&
           std::tie(arrivals[next].key, arrivals[next].job->spec.id) <
               std::tie(ranked.key, ranked.job)) {
      cycle.order.push_back(std::move(arrivals[next++]));
    }
    if (cycle.order.size() >= depth) return;
    const Job* job = still_pending[ranked.known_index];
    if (job == nullptr) continue;  // started, ended or held since: not in line any more
    // Its nodes left since: the next full cycle tells it can never fit.
    Feasibility::Admission admission = feasible.Admit(*job);
    if (!admission.can_fit) continue;
    Candidate candidate;
    candidate.job = job;
    candidate.request = std::move(admission.request);
    candidate.key = ranked.key;
    cycle.order.push_back(std::move(candidate));
  }
  while (next < arrivals.size() && cycle.order.size() < depth) {
    cycle.order.push_back(std::move(arrivals[next++]));
  }
}

// The order of a full cycle, for later cycles to reuse. Started jobs stay
// in it: a start the owner defers (its victims still stopping) must keep
// its place.
QueueOrder KeepOrder(const Cycle& cycle) {
  QueueOrder order;
  order.known.reserve(cycle.state.pending().size());
  for (const auto& [id, job] : cycle.state.pending()) order.known.push_back(id);
  order.ranked.reserve(cycle.order.size());
  for (const Candidate& candidate : cycle.order) {
    const JobId id = candidate.job->spec.id;
    const auto at = std::lower_bound(order.known.begin(), order.known.end(), id);
    order.ranked.push_back(
        RankedJob{candidate.key, id, static_cast<size_t>(at - order.known.begin())});
  }
  order.next_key_change = cycle.decision.next_decision;
  order.ends = KnownEndsOf(cycle);
  return order;
}

// Why each distinct unplaced request of a cycle does not fit, asked once:
// a constrained request's answer counts every node.
class Diagnoses {
 public:
  ReasonCode Why(const Capacity& capacity, const PlacementRequest& request) {
    if (request.eligibility == nullptr && request.locality == GpuLocality::kAny &&
        request.spread == NodeSpread::kAny) {
      return BlockedReason(capacity, request);
    }
    auto [it, inserted] = reasons_.try_emplace(
        Key{request.type, request.eligibility, request.locality, request.spread, request.tasks,
            request.shape, request.task_shapes.get()},
        ReasonCode{});
    if (inserted) it->second = BlockedReason(capacity, request);
    return it->second;
  }

 private:
  using Key = std::tuple<std::optional<GpuTypeId>, const NodeEligibility*, GpuLocality, NodeSpread,
                         int32_t, TaskShape, const std::vector<TaskShape>*>;
  std::map<Key, ReasonCode> reasons_;
};

// Step 4: a reason and position for every job left pending (of the front
// only, when the cycle reused an order: held jobs are then left out too).
// A job that did not fit is diagnosed here, on the capacity left once the
// cycle's starts are placed: what stops it is what the next cycle sees.
// (The node counts behind a reason are the owner's to ask for, when a
// person reads them: TallyNow, TallyEver.)
void Explain(Cycle& cycle, bool defer_etas) {
  cycle.decision.pending.reserve(cycle.order.size() + cycle.never_fit.size() +
                                 cycle.state.held().size());
  Diagnoses diagnoses;
  int64_t position = 0;
  for (const Candidate& candidate : cycle.order) {
    if (candidate.started) continue;
    PendingJob pending{
        candidate.job->spec.id, candidate.reason, position++, candidate.blocker, {}, {},
        candidate.user_limit};
    if (candidate.unplaced) pending.reason = diagnoses.Why(cycle.work, candidate.request);
    cycle.decision.pending.push_back(pending);
  }
  for (const Job* job : cycle.never_fit) {
    cycle.decision.pending.push_back(
        PendingJob{job->spec.id, ReasonCode::kInfeasible, position++, {}, {}, {}, {}});
  }
  if (cycle.partial) return;
  for (const auto& [id, job] : cycle.state.held()) {
    cycle.decision.pending.push_back(PendingJob{id, ReasonCode::kHeld, position++, {}, {}, {}, {}});
  }
  if (cycle.explain != ExplainLevel::kFull) return;
  if (defer_etas) {
    cycle.decision.eta_plan = EtaPlanOf(cycle);
  } else {
    PlanEtas(cycle);
  }
}

}  // namespace

// Head-of-line blocking: the first job that does not fit stops the line.
void RunStrict(Cycle& cycle) {
  for (size_t i = 0; i < cycle.order.size(); ++i) {
    Candidate& candidate = cycle.order[i];
    if (!cycle.QueueAllows(candidate)) continue;
    if (std::optional<Placement> placement = cycle.PlaceOn(cycle.work, candidate.request)) {
      cycle.Start(candidate, std::move(*placement));
      continue;
    }
    cycle.Blocked(candidate);
    if (!cycle.explaining()) return;
    for (size_t j = i + 1; j < cycle.order.size(); ++j) {
      Candidate& behind = cycle.order[j];
      if (!cycle.QueueAllows(behind)) continue;
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
    // The model the shape needs room on: its model when it names one the
    // cluster has. A set of several is modelled as any model, and node
    // constraints are not modelled: the model is a heuristic for where
    // room is kept, never a rule on where a job may go.
    if (!waiting.gpu_types.empty()) {
      std::vector<GpuTypeId> known;
      for (const std::string& name : waiting.gpu_types) {
        if (std::optional<GpuTypeId> type = state.nodes().FindType(name)) known.push_back(*type);
      }
      if (known.empty()) continue;  // no node has the model: it needs no room here
      if (known.size() == 1) shape.type = known.front();
    }
    workload.push_back(shape);
  }
  return FragmentationModel(workload);
}

Decision Decide(const ClusterState& state, Time now, const Policy& policy,
                const DecideOptions& options) {
  BERTH_CHECK(policy.runtimes != nullptr) << "policy " << policy.name << " has no estimator";
  Cycle cycle(state, now, policy, options.explain);
  // ETAs for every job need the whole order: a kFull cycle never reuses one.
  cycle.partial = options.reuse != nullptr && options.explain != ExplainLevel::kFull &&
                  state.pending().size() > options.depth;
  if (cycle.partial) {
    RankFront(cycle, *options.reuse, options.depth);
    cycle.known_ends = &options.reuse->ends;
  } else {
    RankAll(cycle);
  }
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
  if (cycle.explaining()) Explain(cycle, options.defer_etas);
  if (cycle.partial) {
    cycle.decision.partial = true;
    cycle.decision.next_decision = options.reuse->next_key_change;
  } else {
    cycle.decision.next_decision = policy.orderer->NextKeyChange(cycle.order_context());
    if (options.keep_order) cycle.decision.order = KeepOrder(cycle);
  }
  if (cycle.deferred_until) KeepEarliest(cycle.decision.next_decision, *cycle.deferred_until);
  return std::move(cycle.decision);
}

}  // namespace berth::core
