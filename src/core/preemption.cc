// The preemptive discipline (SRTF, Tiresias' LAS): walk the order, start what
// fits, and let a job that does not fit stop running jobs ordered after it
// when that makes room (victims.h). Jobs that still do not fit are skipped,
// not waited on.
#include <optional>

#include "core/cycle.h"
#include "core/placement_memo.h"
#include "core/victims.h"

namespace berth::core {

void RunPreemptive(Cycle& cycle) {
  std::optional<VictimPool> pool;  // built at the first job that needs victims
  PlacementMemo free_memo;
  PlacementMemo victims_memo;
  for (Candidate& candidate : cycle.order) {
    if (!cycle.QueueAllows(candidate)) continue;
    if (!free_memo.KnownToFail(candidate.request)) {
      if (std::optional<Placement> placement = cycle.PlaceOn(cycle.work, candidate.request)) {
        cycle.Start(candidate, std::move(*placement));
        continue;
      }
      free_memo.RecordFailure(candidate.request);
    }
    if (!StartByPreempting(cycle, candidate, pool, victims_memo)) {
      cycle.Blocked(candidate);
      continue;
    }
    // Victims may have freed more than the job took.
    free_memo.ClearFailures();
    victims_memo.ClearFailures();
  }
}

}  // namespace berth::core
