// EASY backfill (Lifka, 1995; Slurm's sched/backfill with one reservation).
//
// Jobs start in order while they fit. The first that does not fit gets a
// reservation: the earliest time its room frees up, from running jobs'
// expected ends, and the exact GPUs it will take then. Every later job may
// start now only if it cannot delay that promise:
//   - it is expected to end before the reservation starts, so it may use any
//     free GPU (checked on `cycle.work`), or
//   - it keeps off the reserved GPUs, CPU and memory (checked on `shadow`, a
//     copy of the free capacity with the reservation taken out).
// Every backfilled job is taken out of `shadow` too, so later long jobs
// cannot use what a short one holds now.
#include <optional>

#include "core/cycle.h"
#include "core/eta.h"
#include "core/placement_memo.h"

namespace berth::core {
namespace {

// Starts jobs in order until one does not fit; returns its index.
std::optional<size_t> StartInOrder(Cycle& cycle) {
  for (size_t i = 0; i < cycle.order.size(); ++i) {
    Candidate& candidate = cycle.order[i];
    if (!cycle.QueueAllows(candidate)) continue;
    std::optional<Placement> placement = cycle.PlaceOn(cycle.work, candidate.request);
    if (!placement) return i;
    cycle.Start(candidate, std::move(*placement));
  }
  return std::nullopt;
}

// Whether the request fits the free capacity now, remembered both ways.
bool FitsNow(const Cycle& cycle, const PlacementRequest& request, PlacementMemo& memo) {
  if (memo.KnownToFit(request)) return true;
  if (memo.KnownToFail(request)) return false;
  // Fitting does not depend on the placement rule: plain best fit answers.
  const bool fits = Place(cycle.work, request).has_value();
  if (fits) {
    memo.RecordFit(request);
  } else {
    memo.RecordFailure(request);
  }
  return fits;
}

}  // namespace

void RunBackfill(Cycle& cycle) {
  const std::optional<size_t> head_index = StartInOrder(cycle);
  if (!head_index) return;
  Candidate& head = cycle.order[*head_index];

  Capacity plan = cycle.work;
  ReleaseSchedule ends(cycle);
  std::optional<PlannedStart> reserved = ends.AdvanceUntilFits(plan, head.request, cycle.now);

  Capacity shadow = cycle.work;
  if (reserved) {
    shadow.Reserve(reserved->placement);
    head.reason = ReasonCode::kReserved;
    cycle.decision.reservations.push_back(
        Reservation{head.job->spec.id, reserved->at, reserved->placement});
  } else {
    // Its nodes are down or draining: nothing to protect yet.
    cycle.Blocked(head);
  }

  const RuntimeEstimator& runtimes = *cycle.policy.runtimes;
  PlacementMemo now_memo;     // on cycle.work
  PlacementMemo shadow_memo;  // on shadow
  for (size_t i = *head_index + 1; i < cycle.order.size(); ++i) {
    Candidate& candidate = cycle.order[i];
    if (!cycle.QueueAllows(candidate)) continue;
    // Memo checks first: most candidates of a busy cluster stop here.
    const bool fails_anyway = now_memo.KnownToFail(candidate.request);
    std::optional<Placement> placement;
    if (!fails_anyway) {
      const bool ends_before_reservation =
          reserved && cycle.now + runtimes.Remaining(*candidate.job, cycle.now) <= reserved->at;
      PlacementMemo& memo = ends_before_reservation ? now_memo : shadow_memo;
      if (!memo.KnownToFail(candidate.request)) {
        placement = cycle.PlaceOn(ends_before_reservation ? cycle.work : shadow, candidate.request);
        if (!placement) memo.RecordFailure(candidate.request);
      }
    }
    if (placement) {
      shadow.Reserve(*placement);
      cycle.Start(candidate, std::move(*placement));
      now_memo.ClearFits();
      continue;
    }
    if (!cycle.explaining()) continue;
    // Would it fit if the reservation did not exist?
    if (!fails_anyway && FitsNow(cycle, candidate.request, now_memo)) {
      candidate.reason = ReasonCode::kReservation;
      candidate.blocker = head.job->spec.id;
    } else {
      cycle.Blocked(candidate);
    }
  }
}

}  // namespace berth::core
