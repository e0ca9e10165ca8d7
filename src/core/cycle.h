// One decision cycle's working data, shared by the disciplines (decide.cc,
// backfill.cc, preemption.cc) and the ETA planner (eta.cc). Internal to the
// core: owners only see Decide and Decision.
#pragma once

#include <optional>
#include <vector>

#include "core/array_throttle.h"
#include "core/capacity.h"
#include "core/cluster_state.h"
#include "core/decide.h"
#include "core/decision.h"
#include "core/fragmentation.h"
#include "core/orderer.h"
#include "core/placer.h"
#include "core/policy.h"
#include "core/user_limits.h"

namespace berth::core {

struct Candidate {
  const Job* job = nullptr;
  PlacementRequest request;
  OrderKey key;
  bool started = false;
  // It did not fit where the discipline looked (Cycle::Blocked): Explain
  // says why, on the capacity the cycle leaves (BlockedReason).
  bool unplaced = false;
  ReasonCode reason = ReasonCode::kResources;
  std::optional<JobId> blocker;
  std::optional<UserLimitHit> user_limit;  // with ReasonCode::kUserLimit
};

// The waiting jobs' task shapes as a workload for the fragmentation model
// (decide.cc).
FragmentationModel WaitingWorkload(const ClusterState& state);

struct Cycle {
  Cycle(const ClusterState& state_in, Time now_in, const Policy& policy_in, ExplainLevel explain_in)
      : state(state_in),
        now(now_in),
        policy(policy_in),
        explain(explain_in),
        work(state_in.capacity()),
        resolver(state_in.nodes()),
        array_throttle(state_in) {
    if (policy.orderer->UsesFairShare()) fair_share.emplace(state, now);
    if (state.quotas() != nullptr) {
      quota.emplace(*state.quotas(), state);
      if (state.quotas()->limits_users()) user_limits.emplace(*state.quotas(), state);
    }
    if (policy.fragmentation_aware) {
      fragmentation.emplace(WaitingWorkload(state));
      place.fragmentation = &*fragmentation;
      place.whole_gpus_by_bucket = true;  // every cycle, on clusters of any size
    }
  }
  // Holds a pointer into itself.
  Cycle(const Cycle&) = delete;
  Cycle& operator=(const Cycle&) = delete;

  // Where the request goes on `capacity` under the policy's placement rule.
  std::optional<Placement> PlaceOn(const Capacity& capacity,
                                   const PlacementRequest& request) const {
    return Place(capacity, request, place);
  }

  bool explaining() const { return explain != ExplainLevel::kNone; }
  OrderContext order_context() const {
    return OrderContext{state, now, *policy.runtimes, fair_share ? &*fair_share : nullptr, partial};
  }

  // Whether the candidate's queue lets it start: its array within its %N,
  // its user within the per-user running limits, then the queue within its
  // ceilings. Records the reason when not. Jobs held back by their queue
  // never block anyone: what holds them is not the GPUs the jobs behind
  // them would take.
  bool QueueAllows(Candidate& candidate) {
    const JobSpec& spec = candidate.job->spec;
    candidate.user_limit.reset();
    if (!array_throttle.Allows(spec)) {
      candidate.reason = ReasonCode::kArrayLimit;
      return false;
    }
    if (user_limits) {
      if (std::optional<UserLimitHit> hit = user_limits->Check(spec)) {
        candidate.reason = ReasonCode::kUserLimit;
        candidate.user_limit = hit;
        return false;
      }
    }
    if (!quota || quota->FitsCeilings(spec.queue, spec.total_gpu())) return true;
    candidate.reason = ReasonCode::kQuota;
    return false;
  }

  // Commits a start to the tentative capacity and the decision.
  void Start(Candidate& candidate, Placement placement, std::vector<JobId> preempts = {}) {
    work.Allocate(placement);
    if (quota) quota->Add(candidate.job->spec.queue, candidate.job->spec.total_gpu());
    if (user_limits) user_limits->Add(candidate.job->spec);
    array_throttle.Add(candidate.job->spec);
    candidate.started = true;
    decision.starts.push_back(JobStart{candidate.job->spec.id, std::move(placement),
                                       std::move(preempts),
                                       policy.orderer->Guarantees(candidate.key),
                                       policy.runtimes->Remaining(*candidate.job, now)});
  }
  // Records that a candidate did not fit the free capacity; Explain says
  // why, when someone will read it.
  void Blocked(Candidate& candidate) {
    candidate.reason = ReasonCode::kResources;
    candidate.unplaced = true;
  }

  const ClusterState& state;
  const Time now;
  const Policy& policy;
  const ExplainLevel explain;
  std::optional<FairShare> fair_share;              // when the orderer weighs it
  std::optional<QuotaUsage> quota;                  // when the cluster has team queues
  std::optional<UserLimitUsage> user_limits;        // when a queue limits users
  std::optional<FragmentationModel> fragmentation;  // for fragmentation-aware policies
  PlaceOptions place;                               // the policy's placement rule
  Capacity work;                                    // live capacity minus this cycle's starts
  RequestResolver resolver;           // owns the eligibility the candidates' requests point at
  ArrayThrottle array_throttle;       // running elements of throttled arrays
  std::vector<Candidate> order;       // pending jobs that can fit, in policy order
  std::vector<const Job*> never_fit;  // pending jobs that can never fit, by id
  bool partial = false;  // ranks the front only, reusing an order (DecideOptions::reuse)
  // A cycle that reuses an order: the expected ends its full cycle planned
  // (QueueOrder::ends), for the reservation's schedule (eta.h).
  const std::vector<KnownEnd>* known_ends = nullptr;
  // The earliest time a stop was put off until (its victim's next
  // checkpoint, victims.h): the decision asks to be made again then.
  std::optional<Time> deferred_until;
  Decision decision;
};

// The disciplines. Each walks cycle.order and fills cycle.decision.
void RunStrict(Cycle& cycle);
void RunBackfill(Cycle& cycle);
void RunPreemptive(Cycle& cycle);
void RunPreemptiveBackfill(Cycle& cycle);

}  // namespace berth::core
