// The Berth discipline: preemption and EASY backfill together.
//
// Walk the order. A job starts if it fits; if not, it may stop running jobs
// ordered after it (victims.h: preemptible, past their minimum run time,
// fewest and cheapest first). The first job that can do neither gets a
// reservation at the earliest time its room frees up, planned from the
// running jobs' predicted ends (eta.h). From then on later jobs start, by
// fitting or by preempting, only if they cannot delay the reservation: they
// end before it by their prediction, or they keep off its GPUs (backfill.cc
// has the same rule without preemption). Without that, one blocked job would
// switch preemption off for the whole queue behind it.
#include <optional>

#include "core/cycle.h"
#include "core/eta.h"
#include "core/placement_memo.h"
#include "core/victims.h"

namespace berth::core {
namespace {

struct ReservationState {
  PlannedStart planned;
  JobId job{};
  Capacity shadow;  // free capacity minus the reservation and long backfills
  PlacementMemo shadow_memo;
  PlacementMemo shadow_victims_memo;
};

struct Memos {
  PlacementMemo free;
  PlacementMemo victims;
  // Capacity came back (victims freed more than the job took).
  void Returned(std::optional<ReservationState>& reservation) {
    free.ClearFailures();
    victims.ClearFailures();
    if (reservation) {
      reservation->shadow_memo.ClearFailures();
      reservation->shadow_victims_memo.ClearFailures();
    }
  }
};

// A later job under a reservation: start it, by fitting or by preempting,
// only where the reservation keeps. Returns whether it preempted.
bool Backfill(Cycle& cycle, Candidate& candidate, std::optional<VictimPool>& pool,
              ReservationState& reservation, Memos& memos) {
  const RuntimeEstimator& runtimes = *cycle.policy.runtimes;
  const bool ends_before =
      cycle.now + runtimes.Remaining(*candidate.job, cycle.now) <= reservation.planned.at;
  Capacity& target = ends_before ? cycle.work : reservation.shadow;
  PlacementMemo& memo = ends_before ? memos.free : reservation.shadow_memo;
  if (!memos.free.KnownToFail(candidate.request) && !memo.KnownToFail(candidate.request)) {
    if (std::optional<Placement> placement = cycle.PlaceOn(target, candidate.request)) {
      reservation.shadow.Reserve(*placement);
      cycle.Start(candidate, std::move(*placement));
      return false;
    }
    memo.RecordFailure(candidate.request);
  }
  PlacementMemo& victims_memo = ends_before ? memos.victims : reservation.shadow_victims_memo;
  if (std::optional<PreemptionPlan> plan =
          PlanPreemption(cycle, candidate, pool, victims_memo, target)) {
    // Mirror the released victims on the other capacity.
    Capacity& other = ends_before ? reservation.shadow : cycle.work;
    for (const Victim* victim : plan->victims) other.Release(victim->job->placement);
    reservation.shadow.Reserve(plan->placement);
    CommitPreemption(cycle, candidate, *pool, std::move(*plan));
    return true;
  }
  if (!cycle.explaining()) return false;
  if (!memos.free.KnownToFail(candidate.request) &&
      Place(cycle.work, candidate.request).has_value()) {
    candidate.reason = ReasonCode::kReservation;
    candidate.blocker = reservation.job;
  } else {
    cycle.Blocked(candidate);
  }
  return false;
}

}  // namespace

void RunPreemptiveBackfill(Cycle& cycle) {
  std::optional<VictimPool> pool;  // built at the first job that needs victims
  Memos memos;
  std::optional<ReservationState> reservation;
  for (Candidate& candidate : cycle.order) {
    if (!cycle.QueueAllows(candidate)) continue;
    if (reservation) {
      if (Backfill(cycle, candidate, pool, *reservation, memos)) memos.Returned(reservation);
      continue;
    }
    if (!memos.free.KnownToFail(candidate.request)) {
      if (std::optional<Placement> placement = cycle.PlaceOn(cycle.work, candidate.request)) {
        cycle.Start(candidate, std::move(*placement));
        continue;
      }
      memos.free.RecordFailure(candidate.request);
    }
    if (StartByPreempting(cycle, candidate, pool, memos.victims)) {
      memos.Returned(reservation);
      continue;
    }
    Capacity plan = cycle.work;
    ReleaseSchedule ends(cycle);
    if (std::optional<PlannedStart> planned =
            ends.AdvanceUntilFits(plan, candidate.request, cycle.now)) {
      Capacity shadow = cycle.work;
      shadow.Reserve(planned->placement);
      candidate.reason = ReasonCode::kReserved;
      cycle.decision.reservations.push_back(
          Reservation{candidate.job->spec.id, planned->at, planned->placement});
      reservation.emplace(
          ReservationState{std::move(*planned), candidate.job->spec.id, std::move(shadow), {}, {}});
    } else {
      cycle.Blocked(candidate);  // its nodes are down or draining
    }
  }
}

}  // namespace berth::core
