// Forward planning over expected job ends: when will a job fit?
//
// Used twice per cycle: for the EASY reservation of the first blocked job
// (backfill.cc) and, with ExplainLevel::kFull, for an ETA for every pending
// job (PlanEtas, run in the cycle or, deferred, by the owner: eta_plan.h). Expected ends come from
// the policy's RuntimeEstimator, so Slurm plans with time limits, oracles with the truth.
//
// The ETA plan replays the discipline on run times: jobs start in order
// where they fit, the first that does not is reserved its room, and later
// ones backfill around it (eta.cc). Where the estimator knows how run times
// spread (RuntimeEstimator::RemainingQuantiles), it replays several times
// (Policy::eta_replays), each job running a different quantile of its run
// time in each, and tells each job the median of its starts; otherwise it
// plays once on expected run times. It knows no preemption and no later
// arrival: the calibration of eta_interval.h answers for those.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "core/capacity.h"
#include "core/cycle.h"
#include "core/eta_plan.h"
#include "core/placement.h"

namespace berth::core {

struct PlannedStart {
  Time at;
  Placement placement;
  // The running job whose end completed the room (none if it fits now).
  std::optional<JobId> after_job;
};

// Expected ends of running work, consumed in time order.
class ReleaseSchedule {
 public:
  // The state's running jobs the cycle did not preempt, plus the cycle's own
  // starts; each ends `Remaining` after the cycle's `now`, or, in a cycle
  // that reuses an order, when its full cycle expected (Cycle::known_ends).
  // The schedule points at their placements: use it within the cycle.
  explicit ReleaseSchedule(const Cycle& cycle);
  // Empty, with the clock at `now`.
  explicit ReleaseSchedule(Time now) : clock_(now) {}

  // REQUIRES: `placement` outlives this schedule or is owned by it via Own().
  void Add(Time end, JobId job, const Placement* placement);
  const Placement* Own(Placement placement);

  // Releases ends (earliest first, ties by job id) into `capacity` until
  // `request` fits, at or after `not_before`. nullopt when it never fits.
  // Plans place by best fit whatever the policy's rule: what matters is
  // when a job fits, which does not depend on the rule, and the
  // fragmentation rule's scan of every node for every pending job would
  // make a full pass minutes long on a large cluster.
  std::optional<PlannedStart> AdvanceUntilFits(Capacity& capacity, const PlacementRequest& request,
                                               Time not_before);
  // The same on copies: when the request would fit, leaving this schedule
  // and the capacity as they are.
  std::optional<PlannedStart> WhenFits(Capacity capacity, const PlacementRequest& request,
                                       Time not_before) const;

  // Releases the earliest end, with every other end at or before it, into
  // `capacity`. nullopt when none is left.
  struct Released {
    Time at;
    JobId job{};  // the last released
  };
  std::optional<Released> ReleaseNext(Capacity& capacity);

 private:
  struct End {
    Time at;
    JobId job;
    const Placement* placement;
    bool operator>(const End& o) const { return at != o.at ? at > o.at : job > o.job; }
  };
  // A min-heap (std::greater): built in one go, then pushed and popped.
  std::vector<End> ends_;
  std::deque<Placement> owned_;
  Time clock_;
};

// The expected ends a full cycle leaves for the cycles that reuse its order
// (QueueOrder::ends): every running job (those it preempts still hold their
// GPUs) and its starts, ascending id.
std::vector<KnownEnd> KnownEndsOf(const Cycle& cycle);

// The replays a plan of `pending` waiting jobs gets (EtaPlan::replays): the
// policy's `wanted`, within 200,000 replayed queue steps in all, so that a
// long queue costs the planner's thread a few plans' time, not `wanted`
// (one plan of 100,000 waiting jobs takes seconds: docs/performance.md).
// Fewer than three have no median worth their cost: then 1, the plan on
// expected run times.
int32_t EtaReplays(int32_t wanted, size_t pending);

// The ETA plan of the cycle (its pending entries are in cycle.decision).
EtaPlan EtaPlanOf(const Cycle& cycle);
// Fills eta and after_job for every pending entry of cycle.decision.
void PlanEtas(Cycle& cycle);

}  // namespace berth::core
