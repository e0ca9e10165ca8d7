// What stopping a running job costs in work: everything it did since its
// last checkpoint. A job's work is saved at the later of
//   - the last multiple of its checkpoint interval (JobSpec::
//     checkpoint_interval) of its current run's time, for jobs known to save
//     periodically (the simulator's --checkpoint-interval), and
//   - the last checkpoint it reported (Job::last_checkpoint),
// and never before its current run started. A job that says neither loses
// its whole current run; one that saves when stopped (JobSpec::
// saves_when_stopped) loses nothing. Victim choice (victims.h) weighs this loss; the
// simulator charges it.
#pragma once

#include <optional>

#include "common/check.h"
#include "core/job.h"
#include "core/time.h"

namespace berth::core {

// The job's checkpoint interval, where it saves periodically.
inline std::optional<Duration> SaveInterval(const JobSpec& spec) {
  if (spec.checkpoint_interval && spec.checkpoint_interval->micros() > 0) {
    return spec.checkpoint_interval;
  }
  return std::nullopt;
}

// The last multiple of `interval` of the current run's time at `now`.
inline Time LastPeriodicSave(const Job& job, Duration interval, Time now) {
  return job.started + interval * ((now - job.started).micros() / interval.micros());
}

// When the running job's work was last saved, at `now`.
// REQUIRES: job.running(), now >= job.started.
inline Time LastCheckpoint(const Job& job, Time now) {
  BERTH_CHECK(job.running() && now >= job.started);
  if (job.spec.saves_when_stopped) return now;
  Time saved = job.started;
  if (const std::optional<Duration> interval = SaveInterval(job.spec)) {
    saved = LastPeriodicSave(job, *interval, now);
  }
  if (job.last_checkpoint && *job.last_checkpoint <= now) saved = Max(saved, *job.last_checkpoint);
  return saved;
}

// When the running job will next save, where that can be told: for a job
// that saves periodically, the end of the current interval of its run; for
// one that reports its checkpoints, one period (the gap between its last two
// reports) after the last, while that is still ahead. Else nullopt (and for
// a job that saves when stopped, which has nothing to wait for).
// REQUIRES: as LastCheckpoint.
inline std::optional<Time> NextCheckpoint(const Job& job, Time now) {
  BERTH_CHECK(job.running() && now >= job.started);
  if (job.spec.saves_when_stopped) return std::nullopt;
  if (const std::optional<Duration> interval = SaveInterval(job.spec)) {
    return LastPeriodicSave(job, *interval, now) + *interval;
  }
  if (job.last_checkpoint && job.checkpoint_period) {
    const Time next = *job.last_checkpoint + *job.checkpoint_period;
    if (next > now) return next;
  }
  return std::nullopt;
}

// The run time stopping the job at `now` throws away.
// REQUIRES: as LastCheckpoint.
inline Duration LossIfStopped(const Job& job, Time now) { return now - LastCheckpoint(job, now); }

}  // namespace berth::core
