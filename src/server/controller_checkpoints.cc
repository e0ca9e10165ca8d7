// Checkpoint reports: a running job says it saved its work, by the API
// (`berth checkpoint`) or by touching the file its tasks' environment names
// (BERTH_CHECKPOINT_FILE, which the agent reports as the file's age on
// every heartbeat). The time goes to the job's record, so a restarted
// server keeps it, and to the core, whose victim choice weighs what each
// preemption would lose (core/checkpoint.h, core/victims.cc).
#include <string>

#include "server/controller.h"
#include "server/job_messages.h"

namespace berth::server {

using core::JobState;
using store::JobRecord;

namespace {

// Reports closer than this to the last one are the same checkpoint seen
// again: an agent turns the file's age into a time on every heartbeat, and
// each heartbeat's time in flight moves it by a few milliseconds. A second
// is far below what a preemption's loss is weighed in.
constexpr core::Duration kCheckpointResolution = core::Duration::Seconds(1);

bool HoldsItsPlacement(JobState state) {
  return state == JobState::kStarting || state == JobState::kRunning ||
         state == JobState::kCompleting;
}

}  // namespace

bool Controller::RecordCheckpointLocked(JobRecord& job, core::Time at) {
  const core::Job* live = state_.Find(job.id);
  if (live == nullptr || !live->running() || !HoldsItsPlacement(job.state)) return false;
  const core::Time now = Now();
  at = core::Min(core::Max(at, live->started), now);
  if (job.last_checkpoint && at < *job.last_checkpoint + kCheckpointResolution) return false;
  job.last_checkpoint = at;
  state_.ReportCheckpoint(job.id, at);
  return true;
}

Result<core::Time> Controller::ReportCheckpoint(const Principal& who, core::JobId id) {
  std::lock_guard lock(mutex_);
  BERTH_ASSIGN_OR_RETURN(JobRecord * job, FindOwnLiveLocked(who, id));
  if (RecordCheckpointLocked(*job, Now())) BERTH_RETURN_IF_ERROR(PersistLocked({job}));
  if (!HoldsItsPlacement(job->state) || !job->last_checkpoint) {
    return NotRunning(id, job->state);
  }
  return *job->last_checkpoint;
}

}  // namespace berth::server
