#include "server/plan_applier.h"

#include <fmt/format.h>

#include <bit>
#include <string>
#include <utility>

#include "server/event_log.h"

namespace berth::server {

using core::JobId;
using core::JobReason;
using core::JobState;
using store::JobRecord;

Controller::PlanApplier::Applied Controller::PlanApplier::Apply(const core::Decision& decision) {
  Controller& c = controller_;
  Plan plan = Check(decision);
  Applied applied;
  if (!plan.records.empty() || !c.unwritten_usage_.empty()) {
    std::vector<JobRecord> records;
    for (const auto& [id, job] : plan.records) records.push_back(job);
    applied.durable = c.QueueRecordsLocked(std::move(records));
  }
  applied.changed = !plan.records.empty();
  for (auto& [id, job] : plan.records) Commit(std::move(job));
  for (const core::Preemption& preemption : decision.preemptions) {
    if (plan.records.contains(preemption.job)) c.state_.MarkStopping(preemption.job);
  }
  for (const core::JobStart* start : plan.starts) {
    c.state_.Start(*start, now_);
    applied.started.push_back(start->job);
  }
  return applied;
}

Controller::PlanApplier::Plan Controller::PlanApplier::Check(const core::Decision& decision) const {
  const std::map<JobId, JobRecord>& jobs = controller_.jobs_;
  Plan plan;
  for (const core::Preemption& preemption : decision.preemptions) {
    auto it = jobs.find(preemption.job);
    if (it == jobs.end() || it->second.state == JobState::kCompleting) continue;
    plan.records[preemption.job] = Stopping(it->second, preemption);
  }
  for (const core::JobStart& start : decision.starts) {
    if (!start.preempts.empty()) continue;
    plan.records[start.job] = Starting(jobs.at(start.job), start);
    plan.starts.push_back(&start);
  }
  return plan;
}

JobRecord Controller::PlanApplier::Stopping(const JobRecord& job,
                                            const core::Preemption& preemption) const {
  JobRecord next = job;
  next.state = JobState::kCompleting;
  next.reason = JobReason::kPreempted;
  next.message = "preempted for job " + std::to_string(core::Value(preemption.for_job)) +
                 "; stopping within its grace period";
  return next;
}

JobRecord Controller::PlanApplier::Starting(const JobRecord& job,
                                            const core::JobStart& start) const {
  JobRecord next = job;
  next.state = JobState::kStarting;
  next.reason = JobReason::kNone;
  next.message.clear();
  next.start_time = now_;
  next.last_checkpoint.reset();  // a checkpoint belongs to the run that saved it
  next.steps.clear();            // and so do steps
  next.signals.clear();          // and signals
  next.placement = RecordPlacement(start.placement);
  ++next.attempts;
  // Its first ETA, judged at this start (ObserveFirstStart), is kept with it.
  if (next.attempts == 1) next.first_eta = controller_.eta_book_.FirstEta(job.id, now_);
  return next;
}

std::vector<store::TaskPlacementRecord> Controller::PlanApplier::RecordPlacement(
    const core::Placement& placement) const {
  std::vector<store::TaskPlacementRecord> out;
  for (const core::TaskPlacement& task : placement.tasks) {
    store::TaskPlacementRecord record;
    record.node = controller_.node_names_.at(task.node);
    for (core::GpuMask bits = task.gpus; bits != 0; bits &= bits - 1) {
      record.gpus.push_back(std::countr_zero(bits));
    }
    out.push_back(std::move(record));
  }
  return out;
}

void Controller::PlanApplier::Commit(JobRecord job) {
  Controller& c = controller_;
  ++job.version;
  LogChange(job);
  if (job.state == JobState::kStarting && job.attempts == 1) ObserveFirstStart(job);
  const JobId id = job.id;
  JobRecord& live = c.jobs_[id] = std::move(job);
  if (live.state == JobState::kStarting) c.IndexPlacementLocked(live);
  c.WakeAgentsLocked(live);
}

void Controller::PlanApplier::LogChange(const JobRecord& job) const {
  const std::string id = std::to_string(core::Value(job.id));
  if (job.state != JobState::kStarting) {
    LogEvent("job_preempting", {{"job", id}, {"why", job.message}});
    return;
  }
  std::string where;
  for (const store::TaskPlacementRecord& task : job.placement) {
    where += (where.empty() ? "" : ";") + task.node + ":";
    for (size_t i = 0; i < task.gpus.size(); ++i) {
      where += (i == 0 ? "" : ",") + std::to_string(task.gpus[i]);
    }
  }
  LogEvent("job_started", {{"job", id},
                           {"attempt", std::to_string(job.attempts)},
                           {"waited_s", fmt::format("{:.3f}", (now_ - job.submit_time).seconds())},
                           {"placement", where}});
}

void Controller::PlanApplier::ObserveFirstStart(const JobRecord& job) {
  Controller& c = controller_;
  c.start_waits_.Add(now_ - job.submit_time);
  if (c.policy_.predictor) c.policy_.predictor->Started(job.id, now_);
  c.eta_book_.Judge(job.id, now_);
  if (c.metrics_ != nullptr) {
    c.metrics_->Observe("berth_queue_wait_seconds", {{"queue", job.request.queue}},
                        (now_ - job.submit_time).seconds());
  }
}

}  // namespace berth::server
