// Changes to a waiting job after its submission: a hold by its owner and
// updates of its time limit, queue or priority (Slurm's `scontrol hold` and
// `scontrol update`). Only waiting jobs change: a running job's time limit
// is its node's to enforce (the supervisor reads it at launch), and its
// queue and priority mattered only until it started.
#include <string>

#include "server/controller.h"
#include "server/event_log.h"
#include "server/job_messages.h"
#include "server/queue_admission.h"
#include "server/unix_groups.h"

namespace berth::server {

using core::JobId;
using core::JobReason;
using core::JobState;
using store::JobRecord;

namespace {

bool Waiting(const JobRecord& job) {
  return job.state == JobState::kPending || job.state == JobState::kHeld;
}

std::string SecondsText(core::Duration duration) {
  return std::to_string(duration.micros() / 1'000'000) + " s";
}

}  // namespace

Status Controller::Hold(const Principal& who, JobId id) {
  std::lock_guard lock(mutex_);
  BERTH_ASSIGN_OR_RETURN(JobRecord * job, FindOwnLiveLocked(who, id));
  if (!Waiting(*job)) {
    return FailedPrecondition(JobName(id) + " is no longer pending (state " +
                              std::string(core::JobStateName(job->state)) +
                              "): only a waiting job can be held");
  }
  if (job->request.hold) return Status::Ok();  // held already
  job->request.hold = true;
  if (job->state == JobState::kHeld) {
    // Waiting for its dependencies: it stays held once they are met
    // (ReleaseDependentsLocked reads request.hold).
    job->message = "held until released; waiting for the jobs it depends on";
    return PersistLocked({job});
  }
  job->state = JobState::kHeld;
  job->reason = JobReason::kHeld;
  job->message = "held until released";
  BERTH_RETURN_IF_ERROR(PersistLocked({job}));
  state_.Hold(id);
  explained_.erase(id);
  LogEvent("job_held", {{"job", std::to_string(core::Value(id))}, {"by", who.user}});
  WakeLocked();
  return Status::Ok();
}

Status Controller::Update(const Principal& who, JobId id, const JobUpdate& update) {
  // Slurm: only an operator sets a job's priority (users may not jump the
  // line), whoever owns it.
  if (update.priority && !who.admin()) {
    return Status(StatusCode::kPermissionDenied,
                  "priority: only an admin may change a job's priority");
  }
  Submitter submitter(who.user, who.admin(), UnixGroupsOf);
  // NSS may block: the groups are looked up outside the lock (Submit does).
  if (!who.admin() && queues_admit_by_group_.load()) submitter.groups();
  std::lock_guard lock(mutex_);
  BERTH_ASSIGN_OR_RETURN(JobRecord * job, FindOwnLiveLocked(who, id));
  if (!Waiting(*job)) {
    const std::string field = update.time_limit ? "time_limit_s"
                              : update.queue    ? "queue"
                                                : "priority";
    return FailedPrecondition(field + ": " + JobName(id) + " is no longer pending (state " +
                              std::string(core::JobStateName(job->state)) +
                              "); only a waiting job's time limit, queue and priority change");
  }
  store::JobRequest request = job->request;
  if (update.time_limit) {
    if (request.estimate && *request.estimate > *update.time_limit) {
      return InvalidArgument("time_limit_s: " + SecondsText(*update.time_limit) +
                             " is below the job's estimate_s " + SecondsText(*request.estimate));
    }
    request.time_limit = update.time_limit;
  }
  if (update.queue) request.queue = *update.queue;
  if (update.priority) request.priority = *update.priority;
  // The rules of its queue, as at submit: who may submit there, the
  // longest time limit, the highest priority (admins pass the last).
  // A time limit is the user's to change within them, up or down: the job
  // has not started, so it could as well be submitted again with it.
  if (state_.quotas() != nullptr) {
    BERTH_RETURN_IF_ERROR(AdmitToQueue(*state_.quotas(), submitter, request));
  }
  job->request = std::move(request);
  BERTH_RETURN_IF_ERROR(PersistLocked({job}));
  state_.Amend(JobSpecOf(*job));
  explained_.erase(id);
  arrived_since_full_ = true;
  LogEvent("job_updated", {{"job", std::to_string(core::Value(id))}, {"by", who.user}});
  WakeLocked();
  return Status::Ok();
}

}  // namespace berth::server
