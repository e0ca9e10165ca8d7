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

// How soon a full pass may follow another to give ETAs (to jobs that
// arrived, or for one that has passed) on a queue longer than the depth an
// event cycle walks: there a full pass ranks every pending job and copies
// the nodes for its plan under the controller's lock (0.3 s at 100k
// pending), so a stream of submits must not make every cycle one. On a
// shorter queue an event cycle ranks every job anyway, and the plan runs
// on the planner's thread: a full pass may come at once.
constexpr core::Duration kLongQueueEtaGap = core::Duration::Seconds(1);

// Why a full pass comes before `explain_every`.
struct EtaDue {
  bool arrivals = false;     // jobs became pending since the last full pass: no ETA yet
  bool passed = false;       // an ETA given has passed, its job still waiting
  bool short_queue = false;  // no more pending jobs than an event cycle walks
};

// A cycle's options at `now`: a full pass (every pending job ranked and
// explained, its order kept for the cycles between, its ETA plan deferred
// to the owner) when there is no order yet, `explain_every` has passed
// since the last one, or ETAs are due (jobs without one, or one that has
// passed: at once on a short queue, else at most every kLongQueueEtaGap;
// a passed ETA at most that often either way, as the plan may give the
// same moment again to a job that cannot start yet); else a pass over the
// front of that order.
core::DecideOptions CycleOptions(const ControllerOptions& options,
                                 const std::optional<core::QueueOrder>& order, core::Time last_full,
                                 core::Time now, EtaDue due) {
  const bool gap_passed = now - last_full >= kLongQueueEtaGap;
  const bool full = !order || now - last_full >= options.explain_every ||
                    (due.arrivals && (due.short_queue || gap_passed)) || (due.passed && gap_passed);
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
                          pending.reason != core::ReasonCode::kUserLimit &&
                          pending.reason != core::ReasonCode::kArrayLimit;
    const std::optional<core::Time> eta = keep_eta ? view.eta : std::nullopt;
    const std::optional<core::EtaInterval> interval = keep_eta ? view.eta_interval : std::nullopt;
    const std::optional<JobId> after_job = keep_eta ? view.after_job : std::nullopt;
    view = pending;
    if (keep_eta) {
      view.eta = eta;
      view.eta_interval = interval;
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
  const EtaDue due{arrived_since_full_, earliest_eta_ && *earliest_eta_ < now,
                   state_.pending().size() <= options_.queue_depth};
  const core::DecideOptions options =
      CycleOptions(options_, queue_order_, last_full_explain_, now, due);
  outcome.full = options.explain == core::ExplainLevel::kFull;
  core::Decision decision = core::Decide(state_, now, policy_, options);
  outcome.parts.decide = lap();
  if (outcome.full) {
    last_full_explain_ = now;
    queue_order_ = std::move(decision.order);
    arrived_since_full_ = false;  // its plan covers every job pending now
    earliest_eta_.reset();        // until its ETAs arrive (ApplyEtas)
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

void Controller::ApplyEtas(const std::vector<core::PlannedEta>& etas, core::Time planned_at) {
  // 100k jobs at 10k nodes, under the lock: only the explanations' table and
  // the ETA book (both paged by id) are touched (a lookup of each job's
  // record would be a walk down a tree of every live job). A job that
  // started or ended since has no explanation any more, and views read
  // explanations of pending jobs only.
  std::lock_guard lock(mutex_);
  std::optional<core::Time> earliest;
  for (const core::PlannedEta& planned : etas) {
    core::PendingJob* view = explained_.find(planned.job);
    if (view == nullptr) continue;
    view->after_job = planned.after_job;
    if (!planned.eta) {
      view->eta.reset();
      view->eta_interval.reset();
      continue;
    }
    const core::EtaEstimate estimate =
        eta_book_.Give(planned.job, planned_at, *planned.eta, planned.latest);
    view->eta = estimate.expected;
    view->eta_interval = estimate.interval;
    earliest = earliest ? core::Min(*earliest, estimate.expected) : estimate.expected;
  }
  earliest_eta_ = earliest;
}

EtaBook::Accuracy Controller::EtaAccuracy() {
  std::lock_guard lock(mutex_);
  return eta_book_.accuracy();
}

}  // namespace berth::server
