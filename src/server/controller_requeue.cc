// A job put back in the queue by its owner or an admin (scontrol requeue,
// the checkpoint-then-requeue pattern). A running job's tasks are stopped
// as a cancel stops them, and once every task has ended the job is pending
// again (ProcessTaskReportsLocked calls RequeueLocked); an ended job is
// pending again at once. Either way its next run's attempt, and so
// SLURM_RESTART_COUNT, is one higher.
#include <string>

#include "server/controller.h"
#include "server/event_log.h"
#include "server/job_messages.h"

namespace berth::server {

using core::JobId;
using core::JobReason;
using core::JobState;
using store::JobRecord;

namespace {

// As Slurm refuses a job submitted with --no-requeue.
Status MustNotRunTwice(JobId id) {
  return FailedPrecondition(JobName(id) +
                            " was submitted with requeue false (--no-requeue): it must not run "
                            "twice");
}

}  // namespace

Status Controller::Requeue(const Principal& who, JobId id) {
  std::lock_guard lock(mutex_);
  if (!jobs_.contains(id)) return RequeueEndedLocked(who, id);
  BERTH_ASSIGN_OR_RETURN(JobRecord * found, FindOwnLiveLocked(who, id));
  JobRecord& job = *found;
  if (job.state != JobState::kRunning && job.state != JobState::kStarting) {
    return NotRunning(id, job.state, "only a running or ended job can be requeued");
  }
  if (!job.request.requeue) return MustNotRunTwice(id);
  job.state = JobState::kCompleting;
  job.reason = JobReason::kRequeued;
  job.message = "requeued by " + who.user + "; stopping";
  BERTH_RETURN_IF_ERROR(PersistLocked({&job}));
  LogEvent("job_requeue_requested", {{"job", std::to_string(core::Value(id))}, {"by", who.user}});
  WakeAgentsLocked(job);
  WakeLocked();
  return Status::Ok();
}

// An ended job, as Slurm requeues a finished batch job: back in the queue
// from its stored record, with its attempts kept (its next run's attempt is
// one higher). A job that never ran has no run to repeat: it is submitted
// again instead; its dependencies were met when it started.
Status Controller::RequeueEndedLocked(const Principal& who, JobId id) {
  Result<JobRecord> stored = store_.GetJob(id);
  if (!stored.ok()) return NotFound(JobName(id) + " does not exist");
  BERTH_RETURN_IF_ERROR(CheckOwnerLocked(who, *stored));
  JobRecord job = std::move(*stored);
  if (!core::IsTerminal(job.state)) {
    // It left memory a moment ago, and its end is still being written.
    return Unavailable(JobName(id) + " is ending; try again");
  }
  if (job.attempts == 0) {
    return FailedPrecondition(JobName(id) + " ended (" +
                              std::string(core::JobStateName(job.state)) +
                              ") without ever running: submit it again");
  }
  if (!job.request.requeue) return MustNotRunTwice(id);
  job.state = JobState::kPending;
  job.reason = JobReason::kRequeued;
  job.message = "requeued by " + who.user + "; waiting to run again";
  job.end_time.reset();
  job.exit_code.reset();
  job.signal.reset();
  job.placement.clear();
  job.master_port.reset();
  BERTH_RETURN_IF_ERROR(PersistLocked({&job}));
  ended_.erase(id);
  JobRecord& live = jobs_[id] = std::move(job);
  AddLiveNameLocked(live);
  AddToStateLocked(live);
  LogEvent("job_requeued", {{"job", std::to_string(core::Value(id))},
                            {"reason", std::string(core::JobReasonName(JobReason::kRequeued))},
                            {"by", who.user}});
  WakeLocked();
  return Status::Ok();
}

}  // namespace berth::server
