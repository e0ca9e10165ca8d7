// How runs end: requeued (preempted, retrying, its node lost) or ended
// (exited, cancelled, failed), and the nodes whose agents fell silent, whose
// runs are lost.
#include <fmt/format.h>

#include <set>
#include <string>
#include <vector>

#include "server/controller.h"
#include "server/event_log.h"

namespace berth::server {

using core::JobId;
using core::JobReason;
using core::JobState;
using store::JobRecord;

namespace {

// The usage of the job's current run, were it to end at `end`.
store::UsageRecord UsageOfRun(const JobRecord& job, const core::Job& run, core::Time end) {
  return store::UsageRecord{job.id,      job.user, job.request.queue, run.spec.total_gpu(),
                            run.started, end};
}

}  // namespace

void Controller::WriteRunUsageLocked(JobRecord& job, const core::Job& run, core::Time end) {
  store::UsageRecord usage = UsageOfRun(job, run, end);
  // What the nodes measured: the largest task's peak, every task's CPU time.
  for (int32_t task = 0; task < job.request.tasks; ++task) {
    auto exit = exits_.find({job.id, task});
    if (exit == exits_.end()) continue;
    if (const std::optional<core::MemoryMiB>& peak = exit->second.peak_memory) {
      usage.peak_memory = usage.peak_memory ? std::max(*usage.peak_memory, *peak) : *peak;
    }
    if (const std::optional<core::Duration>& cpu = exit->second.cpu_time) {
      usage.cpu_time = usage.cpu_time.value_or(core::Duration::Zero()) + *cpu;
    }
  }
  job.peak_memory = usage.peak_memory;
  job.cpu_time = usage.cpu_time;
  unwritten_usage_.push_back(std::move(usage));
}

void Controller::RequeueLocked(JobRecord& job, JobReason reason, std::vector<JobRecord*>& changed) {
  const core::Job* live = state_.Find(job.id);
  if (live != nullptr && live->running()) {
    // The run ends here, however it ended (preempted, its node lost, failed
    // with retries left): its GPU-seconds are accounted like any other's.
    const core::Time now = Now();
    WriteRunUsageLocked(job, *live, now);
    if (reason == JobReason::kPreempted) {
      state_.Preempt(job.id, now);
    } else {
      state_.Requeue(job.id, now);
    }
    arrived_since_full_ = true;  // back in the queue, without an ETA
  }
  job.state = JobState::kPending;
  job.reason = reason;
  job.message = reason == JobReason::kPreempted  ? "preempted; waiting to run again"
                : reason == JobReason::kRequeued ? "requeued; waiting to run again"
                                                 : "its node was lost; waiting to run again";
  UnindexPlacementLocked(job);
  job.placement.clear();
  job.master_port.reset();
  if (reason == JobReason::kPreempted) ++job.preemptions;
  for (int32_t task = 0; task < job.request.tasks; ++task) {
    exits_.erase({job.id, task});
    running_tasks_.erase({job.id, task});
  }
  job.signals.clear();  // sent to the run that ended
  LogEvent("job_requeued", {{"job", std::to_string(core::Value(job.id))},
                            {"reason", std::string(core::JobReasonName(reason))}});
  changed.push_back(&job);
}

void Controller::LoseNodeLocked(JobRecord& job, const std::string& node,
                                std::vector<JobRecord*>& changed) {
  if (job.request.requeue) return RequeueLocked(job, JobReason::kNodeLost, changed);
  // Work that must not run twice: it fails, retries or not.
  EndRunLocked(job, JobState::kFailed, JobReason::kNodeLost, changed, Retry::kNever);
  job.message = "its node '" + node + "' was lost, and it asked not to be requeued";
}

void Controller::EndRunLocked(JobRecord& job, JobState outcome, JobReason reason,
                              std::vector<JobRecord*>& changed, Retry retry) {
  const core::Time now = Now();
  const bool retrying = retry == Retry::kAllowed && outcome == JobState::kFailed &&
                        job.attempts <= job.request.retries;
  if (const core::Job* live = state_.Find(job.id); live != nullptr && live->running()) {
    // A run that succeeded teaches the predictor how long such jobs take
    // (only finished runs: it never sees a duration before the end).
    if (outcome == JobState::kSucceeded && policy_.predictor) {
      policy_.predictor->Observe(live->spec, live->RunTime(now));
    }
    if (!retrying) WriteRunUsageLocked(job, *live, now);  // else RequeueLocked writes it
  }
  if (retrying) {
    RequeueLocked(job, JobReason::kRetrying, changed);
    job.message = "failed; retry " + std::to_string(job.attempts) + " of " +
                  std::to_string(job.request.retries);
    return;
  }
  LeaveCoreLocked(job.id, now);  // either way
  job.state = outcome;
  job.reason = reason;
  job.end_time = now;
  // The placement stays: where it ran, and where its logs are.
  RememberEndedLocked(job.id, outcome);
  for (int32_t task = 0; task < job.request.tasks; ++task) {
    exits_.erase({job.id, task});
    running_tasks_.erase({job.id, task});
  }
  job.signals.clear();
  LogEvent("job_ended", {{"job", std::to_string(core::Value(job.id))},
                         {"state", std::string(core::JobStateName(outcome))},
                         {"reason", std::string(core::JobReasonName(reason))},
                         {"exit_code", job.exit_code ? std::to_string(*job.exit_code) : "none"},
                         {"signal", job.signal ? std::to_string(*job.signal) : "none"}});
  changed.push_back(&job);
}

std::vector<store::UsageRecord> Controller::RunningUsage() {
  std::lock_guard lock(mutex_);
  const core::Time now = Now();
  std::vector<store::UsageRecord> runs;
  runs.reserve(state_.running().size());
  for (const auto& [id, run] : state_.running()) {
    runs.push_back(UsageOfRun(jobs_.at(id), *run, now));
  }
  return runs;
}

Status Controller::CheckHeartbeats() {
  std::lock_guard lock(mutex_);
  const core::Time now = Now();
  std::vector<JobRecord*> changed;
  Status failure = Status::Ok();
  // The node's lease, granted at most heartbeat_timeout from when we heard
  // it, has surely ended, and the node has stopped its tasks.
  const core::Time cutoff = now - options_.heartbeat_timeout - options_.lease_margin;
  for (const auto& [id, heard] : silence_.SilentBefore(cutoff)) {
    const std::string& name = node_names_.at(id);
    NodeEntry& node = nodes_.at(name);
    const core::NodeState was = node.record.state;
    node.record.state = core::NodeState::kDown;
    if (failure = store_.PutNode(node.record); !failure.ok()) {
      // Not down yet, and still watched: the next check tries again.
      node.record.state = was;
      break;
    }
    silence_.Forget(id);
    LogWarning("node_down",
               {{"node", name}, {"silent_s", fmt::format("{:.1f}", (now - heard).seconds())}});
    state_.SetNodeState(node.id, core::NodeState::kDown);
    // A copy: requeueing a job takes it out of the index.
    const std::set<JobId> placed = placed_on_.contains(name) ? placed_on_[name] : std::set<JobId>{};
    for (JobId job_id : placed) {
      JobRecord& job = jobs_.at(job_id);
      // Ended already (a gang on two nodes lost in the same check keeps
      // its placement once it ended): nothing more to do.
      if (core::IsTerminal(job.state)) continue;
      if (job.state == JobState::kCompleting && job.reason == JobReason::kCancelled) {
        EndRunLocked(job, JobState::kCancelled, JobReason::kCancelled, changed);
        if (job.message.ends_with("; stopping")) job.message.resize(job.message.size() - 10);
        job.message += "; its node '" + name + "' went down before its tasks reported their end";
      } else {
        LoseNodeLocked(job, name, changed);
      }
    }
  }
  // What the nodes before a failure changed is written all the same.
  BERTH_RETURN_IF_ERROR(CommitLocked(changed));
  if (!changed.empty()) {
    WakeLocked();
  }
  return failure;
}

}  // namespace berth::server
