// Decision cycles: choose the cycle's options, core::Decide, apply the plan
// (PlanApplier: it queues the write and applies the changes in memory; the
// owner waits for the write outside the lock), and merge the explanations.
// How runs end is in controller_runs.cc.
#include <chrono>
#include <optional>
#include <utility>
#include <vector>

#include "core/decide.h"
#include "server/controller.h"
#include "server/plan_applier.h"

namespace berth::server {

using core::JobId;

namespace {

// A cycle's options at `now`: a full pass (every pending job ranked and
// explained, its order kept for the cycles between, its ETA plan deferred
// to the owner) when there is no order yet or `explain_every` has passed
// since the last one; else a pass over the front of that order.
core::DecideOptions CycleOptions(const ControllerOptions& options,
                                 const std::optional<core::QueueOrder>& order, core::Time last_full,
                                 core::Time now) {
  const bool full = !order || now - last_full >= options.explain_every;
  core::DecideOptions decide{full ? core::ExplainLevel::kFull : core::ExplainLevel::kReasons};
  if (full) {
    decide.keep_order = true;
    decide.defer_etas = true;  // planned outside the lock: ApplyEtas
  } else {
    decide.reuse = &*order;
    decide.depth = options.queue_depth;
  }
  return decide;
}

// The cycle's view of its pending jobs (reason, position, blocker) into
// `explained`; the jobs it started leave it.
//
// ETAs come only from the plans of full passes (ApplyEtas): a job still
// waiting for room keeps the last one planned, one that can never start or
// waits for its team's quota or its user's limit has none. A cycle between full ones on a long
// queue explains only the front it walked (Decision::partial); the jobs
// behind keep what the last full one said.
void MergeExplanations(const std::vector<core::PendingJob>& pending_jobs,
                       const std::vector<JobId>& started,
                       core::PagedIdMap<core::PendingJob>& explained) {
  for (JobId job : started) explained.erase(job);
  for (const core::PendingJob& pending : pending_jobs) {
    // Held jobs show their record's reason ("held", "dependency"): views
    // read explained_ for pending jobs only.
    if (pending.reason == core::ReasonCode::kHeld) continue;
    core::PendingJob& view = explained[pending.job];
    const bool keep_eta = pending.reason != core::ReasonCode::kInfeasible &&
                          pending.reason != core::ReasonCode::kQuota &&
                          pending.reason != core::ReasonCode::kUserLimit;
    const std::optional<core::Time> eta = keep_eta ? view.eta : std::nullopt;
    const std::optional<JobId> after_job = keep_eta ? view.after_job : std::nullopt;
    view = pending;
    if (keep_eta) {
      view.eta = eta;
      view.after_job = after_job;
    }
  }
}

}  // namespace

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
  const core::Time now = Now();
  const core::DecideOptions options = CycleOptions(options_, queue_order_, last_full_explain_, now);
  outcome.full = options.explain == core::ExplainLevel::kFull;
  core::Decision decision = core::Decide(state_, now, policy_, options);
  outcome.parts.decide = lap();
  if (outcome.full) {
    last_full_explain_ = now;
    queue_order_ = std::move(decision.order);
  }
  PlanApplier::Applied applied = PlanApplier(*this, now).Apply(decision);
  // Waited for by the owner, outside the lock.
  outcome.durable = std::move(applied.durable);
  outcome.changed = applied.changed;
  MergeExplanations(decision.pending, applied.started, explained_);
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
