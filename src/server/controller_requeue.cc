// A running job put back in the queue by its owner or an admin (scontrol
// requeue, the checkpoint-then-requeue pattern): its tasks are stopped as a
// cancel stops them, and once every task has ended the job is pending
// again (ProcessTaskReportsLocked calls RequeueLocked); its next run's
// attempt, and so SLURM_RESTART_COUNT, is one higher.
#include <string>

#include "server/controller.h"
#include "server/event_log.h"

namespace berth::server {

using core::JobId;
using core::JobReason;
using core::JobState;
using store::JobRecord;

Status Controller::Requeue(const Principal& who, JobId id) {
  std::lock_guard lock(mutex_);
  BERTH_ASSIGN_OR_RETURN(JobRecord * found, FindOwnLiveLocked(who, id));
  JobRecord& job = *found;
  if (job.state != JobState::kRunning && job.state != JobState::kStarting) {
    return FailedPrecondition("job " + std::to_string(core::Value(id)) + " is not running (state " +
                              std::string(core::JobStateName(job.state)) +
                              "): only a running job can be requeued");
  }
  if (!job.request.requeue) {
    // As Slurm refuses a job submitted with --no-requeue.
    return FailedPrecondition("job " + std::to_string(core::Value(id)) +
                              " was submitted with requeue false (--no-requeue): it must not run "
                              "twice");
  }
  job.state = JobState::kCompleting;
  job.reason = JobReason::kRequeued;
  job.message = "requeued by " + who.user + "; stopping";
  BERTH_RETURN_IF_ERROR(PersistLocked({&job}));
  LogEvent("job_requeue_requested", {{"job", std::to_string(core::Value(id))}, {"by", who.user}});
  WakeAgentsLocked(job);
  WakeLocked();
  return Status::Ok();
}

}  // namespace berth::server
