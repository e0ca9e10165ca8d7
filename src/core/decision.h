// What one decision cycle concludes. Plain values: the owner applies them
// (the simulator at once, the server through its plan applier, which
// re-checks each start against the latest state).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/eta_interval.h"
#include "core/eta_plan.h"
#include "core/ids.h"
#include "core/order_key.h"
#include "core/placement.h"
#include "core/reason.h"
#include "core/time.h"

namespace berth::core {

struct JobStart {
  JobId job{};
  Placement placement;
  // Running jobs that must stop first: the placement uses their GPUs.
  std::vector<JobId> preempts;
  // It starts under the policy's starvation guarantee (Job::guaranteed).
  bool guaranteed = false;
  // How long the policy's estimator expected it to run from the start
  // (RuntimeEstimator::Remaining then). The state keeps it with the run
  // (ClusterState::RunStart), so that a cycle reusing an order plans the
  // run's end without reading the job again (eta.cc).
  std::optional<Duration> expected_remaining;
};

struct Preemption {
  JobId job{};      // the victim
  JobId for_job{};  // the job it makes room for
};

// A promise: `job` starts at `start` on `placement`; backfill may not delay it.
struct Reservation {
  JobId job{};
  Time start;
  Placement placement;
};

// Which per-user running limit holds a job back (ReasonCode::kUserLimit),
// with the numbers of the cycle that found it (user_limits.h).
enum class UserLimitKind : uint8_t { kGpus, kRunningJobs };
struct UserLimitHit {
  UserLimitKind kind = UserLimitKind::kGpus;
  uint32_t queue = 0;   // the queue that sets the limit: an index in the QuotaTree decided on
  int64_t running = 0;  // the user's running there: milli-GPUs or jobs
  int64_t allowed = 0;  // the limit, in the same unit
  bool operator==(const UserLimitHit&) const = default;
};

struct PendingJob {
  JobId job{};
  ReasonCode reason = ReasonCode::kResources;
  // 0 = next in line. Jobs that can never fit come after those that can,
  // held jobs last.
  int64_t position = 0;
  // The job ahead that holds it back: the head of the line (kPriority) or
  // the reserved job (kReservation).
  std::optional<JobId> blocker;
  // ExplainLevel::kFull only: the expected start, and the running job whose
  // expected end completes the room it needs.
  std::optional<Time> eta;
  std::optional<JobId> after_job;
  // kUserLimit: the limit and its numbers.
  std::optional<UserLimitHit> user_limit;
  // The 80% interval around `eta`. The core leaves it empty: the server
  // calibrates it on how its earlier ETAs turned out (server/eta_book.h).
  std::optional<EtaInterval> eta_interval = std::nullopt;
  // With `eta`: the start time limits guarantee, where they bind
  // (PlannedEta::latest).
  std::optional<Time> latest_eta = std::nullopt;
};

// The pending order a full cycle computed, kept by the owner so that the
// cycles between full ones need not rank every pending job again
// (DecideOptions::reuse). Keys are as of that cycle.
struct RankedJob {
  OrderKey key;
  JobId job{};
  size_t known_index = 0;  // where `job` is in QueueOrder::known
};
// A run's expected end as a full cycle planned it (QueueOrder::ends).
struct KnownEnd {
  JobId job{};
  Time started;  // of the run it was planned for: a later run is planned anew
  Time end;
};
struct QueueOrder {
  std::vector<RankedJob> ranked;  // the jobs that could fit, in policy order
  std::vector<JobId> known;       // every job pending then, ascending id
  std::optional<Time> next_key_change;
  // Expected ends of the jobs running then and of that cycle's starts,
  // ascending id. A cycle that reuses the order plans its reservations
  // with these, as it ranks with that cycle's keys, instead of estimating
  // every running job again: that read each running job's memory, most of
  // an event cycle at 31k running jobs. Runs that started since (or
  // started again), and ends already passed, are estimated afresh.
  std::vector<KnownEnd> ends;
};

struct Decision {
  std::vector<JobStart> starts;  // in decision order
  std::vector<Preemption> preemptions;
  std::vector<Reservation> reservations;
  std::vector<PendingJob> pending;  // in queue order; empty with ExplainLevel::kNone
  // A cycle that reused an order walked only the front of the queue:
  // `pending` then lists only the jobs it looked at (and arrivals that can
  // never fit); the others stand as the last full cycle explained them.
  bool partial = false;
  // DecideOptions::keep_order: this cycle's order, for later cycles to reuse.
  std::optional<QueueOrder> order;
  // DecideOptions::defer_etas with ExplainLevel::kFull: the ETA plan, for
  // the owner to run with PlanEtas (`pending` then has no ETAs).
  std::optional<EtaPlan> eta_plan;
  // Decide again no later than this, even if no event arrives (a running job
  // crosses a priority threshold, for example).
  std::optional<Time> next_decision;
};

}  // namespace berth::core
