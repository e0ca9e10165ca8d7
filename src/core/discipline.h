// What a policy does when the job at the front of its order does not fit:
// apart from policy.h so that plain-value plans (eta_plan.h) can name it.
#pragma once

namespace berth::core {

enum class Discipline {
  // In order; the first job that does not fit blocks everything behind it
  // (head-of-line blocking, as the published FIFO/SJF baselines).
  kStrict,
  // EASY backfill: the first job that does not fit gets a reservation at the
  // earliest time it fits; later jobs start now only if they do not delay it.
  kBackfill,
  // In order, skipping jobs that do not fit; a job may preempt running jobs
  // ordered after it when that makes room.
  kPreemptive,
  // Preemption as kPreemptive until a job can neither fit nor preempt; that
  // job gets a reservation and the rest backfill around it as kBackfill.
  kPreemptiveBackfill,
};

}  // namespace berth::core
