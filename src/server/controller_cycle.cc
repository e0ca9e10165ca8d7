// Decision cycles: core::Decide -> queue the write -> apply (the owner
// waits for the write outside the lock). How runs end is in
// controller_runs.cc.
#include <fmt/format.h>

#include <chrono>
#include <future>
#include <utility>

#include "common/check.h"
#include "core/decide.h"
#include "server/controller.h"
#include "server/event_log.h"

namespace berth::server {

using core::JobId;
using core::JobReason;
using core::JobState;
using store::JobRecord;

std::vector<store::TaskPlacementRecord> Controller::RecordPlacementLocked(
    const core::Placement& placement) const {
  std::vector<store::TaskPlacementRecord> out;
  for (const core::TaskPlacement& task : placement.tasks) {
    store::TaskPlacementRecord record;
    record.node = node_names_.at(task.node);
    for (core::GpuMask bits = task.gpus; bits != 0; bits &= bits - 1) {
      record.gpus.push_back(std::countr_zero(bits));
    }
    out.push_back(std::move(record));
  }
  return out;
}

Result<Controller::CycleOutcome> Controller::RunCycle() {
  using Steady = std::chrono::steady_clock;
  const Steady::time_point asked = Steady::now();
  std::lock_guard lock(mutex_);
  Steady::time_point mark = Steady::now();
  CycleOutcome outcome;
  // The time since `mark`, and a new mark.
  auto lap = [&mark] {
    const Steady::time_point now = Steady::now();
    return now - std::exchange(mark, now);
  };
  outcome.parts.lock_wait = mark - asked;
  ++cycles_;
  outcome.oldest_event = std::exchange(unseen_since_, std::nullopt);
  const core::Time now = clock_.Now();
  const bool full = !queue_order_ || now - last_full_explain_ >= options_.explain_every;
  outcome.full = full;
  core::DecideOptions decide{full ? core::ExplainLevel::kFull : core::ExplainLevel::kReasons};
  if (full) {
    decide.keep_order = true;
    decide.defer_etas = true;  // planned outside the lock: ApplyEtas
  } else {
    decide.reuse = &*queue_order_;
    decide.depth = options_.queue_depth;
  }
  core::Decision decision = core::Decide(state_, now, policy_, decide);
  outcome.parts.decide = lap();
  if (full) {
    last_full_explain_ = now;
    queue_order_ = std::move(decision.order);
  }

  // The decision's changes to records, written (queued) before memory and
  // the core change, so the store sees them in order with other changes.
  std::map<JobId, JobRecord> updated;
  for (const core::Preemption& preemption : decision.preemptions) {
    auto it = jobs_.find(preemption.job);
    if (it == jobs_.end() || it->second.state == JobState::kCompleting) continue;
    JobRecord job = it->second;
    job.state = JobState::kCompleting;
    job.reason = JobReason::kPreempted;
    job.message = "preempted for job " + std::to_string(core::Value(preemption.for_job)) +
                  "; stopping within its grace period";
    updated[job.id] = std::move(job);
  }
  std::vector<const core::JobStart*> starts;
  for (const core::JobStart& start : decision.starts) {
    // A start that needs victims waits until they have exited: they hold
    // their GPUs through their grace period.
    if (!start.preempts.empty()) continue;
    JobRecord job = jobs_.at(start.job);
    job.state = JobState::kStarting;
    job.reason = JobReason::kNone;
    job.message.clear();
    job.start_time = now;
    job.placement = RecordPlacementLocked(start.placement);
    ++job.attempts;
    updated[job.id] = std::move(job);
    starts.push_back(&start);
  }
  if (!updated.empty() || !unwritten_usage_.empty()) {
    std::vector<JobRecord> records;
    for (const auto& [id, job] : updated) records.push_back(job);
    // Waited for by the owner, outside the lock (CycleOutcome::durable).
    outcome.durable = QueueRecordsLocked(std::move(records));
  }
  for (auto& [id, job] : updated) {
    ++job.version;
    if (job.state == JobState::kStarting) {
      std::string where;
      for (const store::TaskPlacementRecord& task : job.placement) {
        where += (where.empty() ? "" : ";") + task.node + ":";
        for (size_t i = 0; i < task.gpus.size(); ++i) {
          where += (i == 0 ? "" : ",") + std::to_string(task.gpus[i]);
        }
      }
      LogEvent("job_started",
               {{"job", std::to_string(core::Value(id))},
                {"attempt", std::to_string(job.attempts)},
                {"waited_s", fmt::format("{:.3f}", (now - job.submit_time).seconds())},
                {"placement", where}});
    } else {
      LogEvent("job_preempting", {{"job", std::to_string(core::Value(id))}, {"why", job.message}});
    }
    if (job.state == JobState::kStarting && job.attempts == 1) {
      start_waits_.Add(now - job.submit_time);
      if (metrics_ != nullptr) {
        metrics_->Observe("berth_queue_wait_seconds", {{"queue", job.request.queue}},
                          (now - job.submit_time).seconds());
      }
    }
    JobRecord& stored = jobs_[id] = std::move(job);
    if (stored.state == JobState::kStarting) IndexPlacementLocked(stored);
    WakeAgentsLocked(stored);  // a task to start, or one to stop
  }
  for (const core::Preemption& preemption : decision.preemptions) {
    if (updated.contains(preemption.job)) state_.MarkStopping(preemption.job);
  }
  for (const core::JobStart* start : starts) state_.Start(*start, now);

  // ETAs come only from the plans of full passes (ApplyEtas): a job still
  // waiting for room keeps the last one planned, one that can never start
  // or waits for its team's quota has none. A cycle between full ones on a
  // long queue explains only the front it walked (Decision::partial); the
  // jobs behind keep what the last full one said.
  for (const core::JobStart* start : starts) explained_.erase(start->job);
  for (const core::PendingJob& pending : decision.pending) {
    // Held jobs show their record's reason ("held", "dependency"): views
    // read explained_ for pending jobs only.
    if (pending.reason == core::ReasonCode::kHeld) continue;
    core::PendingJob& view = explained_[pending.job];
    const bool keep_eta = pending.reason != core::ReasonCode::kInfeasible &&
                          pending.reason != core::ReasonCode::kQuota;
    const std::optional<core::Time> eta = keep_eta ? view.eta : std::nullopt;
    const std::optional<JobId> after_job = keep_eta ? view.after_job : std::nullopt;
    view = pending;
    if (keep_eta) {
      view.eta = eta;
      view.after_job = after_job;
    }
  }
  outcome.changed = !updated.empty();
  outcome.eta_plan = std::move(decision.eta_plan);
  outcome.parts.apply = lap();
  return outcome;
}

void Controller::ApplyEtas(const std::vector<core::PlannedEta>& etas) {
  // 100k jobs at 10k nodes, under the lock: only the explanations' table is
  // touched (a lookup of each job's record would be a walk down a tree of
  // every live job). A job that started or ended since has no explanation
  // any more, and views read explanations of pending jobs only.
  std::lock_guard lock(mutex_);
  for (const core::PlannedEta& planned : etas) {
    core::PendingJob* view = explained_.find(planned.job);
    if (view == nullptr) continue;
    view->eta = planned.eta;
    view->after_job = planned.after_job;
  }
}

}  // namespace berth::server
