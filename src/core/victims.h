// Choosing running jobs to stop so a more important one can start. Shared by
// the preemptive disciplines (preemption.cc, preemptive_backfill.cc).
//
// Victims are whole jobs (every task of a gang is released), allowed by the
// policy's PreemptionScope, running for at least the policy's minimum run
// time (so nothing is stopped again right after a restart; longer for a job
// stopped before, Policy::min_run_growth), not started in this cycle, and
// ordered after the job they make room for.
//
// Order says who should run; it does not say that stopping a run pays. With
// Policy::preemption_gain_ratio set, a job may stop a victim only when
//   ratio x R_new + loss + restart < R_victim,
// R the expected remaining run times. That is the exchange argument for
// mean completion time: running the newcomer first finishes it about
// R_victim sooner (it would wait for the victim) and the victim R_new + loss
// + restart later. A newcomer that probes its burst (runtime_predictor.h)
// counts as the probe's quantum only against a victim that loses nothing;
// against a loss, as what is known of its size. Where sizes are alike, or
// the victim is nearly done, or has run long since its last checkpoint,
// nothing is stopped, however the order ranks the two (aging and fair share
// reorder the queue; they do not pay for lost work). A run whose next save
// is known (checkpoint.h) and nearer than the work it would lose is not
// stopped yet: the stop waits for the save (Cycle::deferred_until wakes the
// policy then). A run started under the starvation guarantee whose guarantee
// lapsed (berth_orderer.h, overload) is stopped this way only where it loses
// no work. A higher priority class, the starving head (Orderer::Guarantees)
// and quota reclaim are promises, not gains: they stop victims without the
// rule. The head still waits for a run that its earlier stops protect
// (Policy::min_run_growth); a higher class and reclaim do not.
#pragma once

#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "core/cycle.h"
#include "core/placement_memo.h"

namespace berth::core {

struct Victim {
  const Job* job = nullptr;
  OrderKey key;
  GpuTypeId type{};  // gangs never mix models, so one per job
  int64_t gpus = 0;  // whole GPUs it holds
  Duration loss;     // work lost if stopped now: since its last checkpoint, else its run
  std::optional<Time> next_checkpoint;  // its next save (checkpoint.h), if known
  Duration remaining;                   // its expected remaining run time (for the gain rule)
  Duration restart;                     // what restarting it costs
  // Still within the run its earlier stops earned it (Policy::min_run_growth).
  bool protected_by_stops = false;
  bool taken = false;  // preempted earlier in this cycle
  // Asked to stop in an earlier cycle, still in its grace period: its GPUs
  // are already on their way back. It costs nothing more, so a candidate
  // claims it before stopping anyone else, and then waits for it.
  bool stopping = false;
};

// The stoppable running jobs, lowest-ordered first, and the GPUs the
// eligible ones hold. A candidate may stop only jobs ordered after it;
// candidates arrive in policy order, so the eligible set is a prefix that
// only shrinks, and a moving boundary keeps the sums exact without rescans.
// Jobs already stopping come first and stay eligible to every candidate
// whatever their rank: claiming them stops nothing.
class VictimPool {
 public:
  explicit VictimPool(const Cycle& cycle);

  // Drops victims that rank above `candidate` from the eligible prefix.
  void NarrowTo(const Candidate& candidate);
  std::span<Victim> eligible() { return {victims_.data(), end_}; }
  // The jobs already stopping (the front of the pool).
  std::span<Victim> stopping() { return {victims_.data(), stopping_}; }
  // Every stoppable job, eligible or not (for quota reclaim).
  std::span<Victim> all() { return victims_; }
  void Take(Victim& victim);
  // The pool's own entry for a copy of one of its victims.
  Victim* Same(const Victim& copy);
  // Whole GPUs held by eligible, untaken victims of the request's model.
  int64_t Gpus(const PlacementRequest& request) const;

 private:
  std::vector<Victim> victims_;
  size_t end_ = 0;
  size_t stopping_ = 0;
  std::vector<int64_t> gpus_by_type_;
};

struct PreemptionPlan {
  std::vector<Victim*> victims;  // to stop; already released from the planning capacity
  Placement placement;           // for the candidate, using their GPUs
};

// Finds victims in `pool` (built on first use) that make room for
// `candidate` on `capacity`, the policy's VictimChoice deciding which.
// Victims are the jobs ordered after the candidate (unless the orderer says
// its key does not preempt by order) and, when the cluster has team queues
// and the candidate's queue is within its guarantee, any job of a queue that
// is borrowing (quota reclaim). On
// success the victims are released from `capacity`; on failure it is
// unchanged and `memo` remembers the request.
std::optional<PreemptionPlan> PlanPreemption(Cycle& cycle, const Candidate& candidate,
                                             std::optional<VictimPool>& pool, PlacementMemo& memo,
                                             Capacity& capacity);

// Records a plan: its victims leave the pool and are preempted, and the
// candidate starts. REQUIRES: the victims are released from cycle.work.
void CommitPreemption(Cycle& cycle, Candidate& candidate, VictimPool& pool, PreemptionPlan plan);

// PlanPreemption on cycle.work, then CommitPreemption. On success, records the preemptions
// and the start in the cycle and returns true; `memo` remembers requests that
// cannot be helped this way.
// `pool` is built on first use: most cycles never need it.
bool StartByPreempting(Cycle& cycle, Candidate& candidate, std::optional<VictimPool>& pool,
                       PlacementMemo& memo);

}  // namespace berth::core
