#include "sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <queue>
#include <set>

#include "common/check.h"
#include "core/checkpoint.h"
#include "core/cluster_state.h"
#include "core/decide.h"

namespace berth::sim {
namespace {

using core::Duration;
using core::JobId;
using core::Time;

// Where each job stands in the simulation; indexed like the workload.
struct JobRun {
  Duration work_done;     // useful run time so far (restart overhead excluded)
  Time run_start;         // start of the current run
  Duration run_overhead;  // restart overhead at the start of the current run
  Time queued_since;
  int32_t generation = 0;  // bumps on preemption, invalidating its completion event
  bool started = false;
};

// The oracle: true durations, and the true remaining work from the
// simulator's own accounting (restart overhead is not work).
class OracleEstimator final : public core::RuntimeEstimator {
 public:
  OracleEstimator(const std::vector<SimJob>& jobs, const std::vector<JobRun>& runs,
                  const std::vector<size_t>& index_of)
      : jobs_(jobs), runs_(runs), index_of_(index_of) {}

  Duration Expected(const core::Job& job) const override { return Sim(job).duration; }
  Duration Remaining(const core::Job& job, Time now) const override {
    const size_t i = IndexOf(job);
    const JobRun& run = runs_[i];
    Duration done = run.work_done;
    if (job.running()) done += core::Max(Duration::Zero(), now - run.run_start - run.run_overhead);
    return core::Max(Duration::Zero(), jobs_[i].duration - done);
  }

 private:
  size_t IndexOf(const core::Job& job) const {
    return index_of_[static_cast<size_t>(core::Value(job.spec.id))];
  }
  const SimJob& Sim(const core::Job& job) const { return jobs_[IndexOf(job)]; }

  const std::vector<SimJob>& jobs_;
  const std::vector<JobRun>& runs_;
  const std::vector<size_t>& index_of_;
};

enum class EventKind { kCompletion = 0, kWakeUp = 1 };

struct Event {
  Time at;
  EventKind kind;
  size_t job;  // workload index, for completions
  int32_t generation;
  bool operator>(const Event& o) const {
    if (at != o.at) return at > o.at;
    if (kind != o.kind) return kind > o.kind;
    return job > o.job;
  }
};

class Simulation {
 public:
  Simulation(const Workload& workload, core::Policy policy, const SimOptions& options)
      : workload_(workload),
        policy_(std::move(policy)),
        options_(options),
        runs_(workload.jobs.size()) {
    for (const core::NodeSpec& node : workload.partition.nodes) {
      state_.AddNode(node);
      total_gpus_ += static_cast<int64_t>(node.gpus.size());
    }
    int64_t max_id = 0;
    for (const SimJob& job : workload.jobs) max_id = std::max(max_id, core::Value(job.spec.id));
    index_of_.assign(static_cast<size_t>(max_id) + 1, 0);
    for (size_t i = 0; i < workload.jobs.size(); ++i) {
      index_of_[static_cast<size_t>(core::Value(workload.jobs[i].spec.id))] = i;
    }
    if (!options.queues.empty()) {
      state_.SetQuotas(core::QuotaTree::Make(options.queues).value());
      result_.by_team = true;
    }
    if (policy_.knowledge == core::RuntimeKnowledge::kOracle) {
      policy_.runtimes = std::make_shared<OracleEstimator>(workload_.jobs, runs_, index_of_);
    }
    outcomes_.resize(workload.jobs.size());
    plan_etas_.resize(workload.jobs.size());
  }

  Result<SimResult> Run();

 private:
  Time NextTime() const;
  void Complete(const Event& event);
  void Arrive(size_t i, Time now);
  void Preempt(JobId id, Time now);
  void Start(const core::JobStart& start, Time now);
  void Record(Time now);
  void RecordFirstEtas(const core::Decision& decision, size_t first, size_t end);
  size_t IndexOf(JobId id) const { return index_of_[static_cast<size_t>(core::Value(id))]; }

  const Workload& workload_;
  core::Policy policy_;
  const SimOptions& options_;
  core::ClusterState state_;
  std::vector<JobRun> runs_;
  std::vector<size_t> index_of_;
  std::vector<JobOutcome> outcomes_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  // The plan's first ETA per job: the calibrator learns the plan's error,
  // while the outcome keeps the estimate shown (core::EstimateEta).
  std::vector<std::optional<Time>> plan_etas_;
  core::EtaCalibrator eta_calibrator_;  // judged at each first start of a job given an ETA
  std::set<Time> wake_ups_;             // scheduled, so a policy asking twice adds one event
  size_t next_arrival_ = 0;
  int64_t busy_gpus_ = 0;
  int64_t total_gpus_ = 0;
  int64_t finished_ = 0;
  SimResult result_;
};

Time Simulation::NextTime() const {
  Time next = Time::Infinite();
  if (next_arrival_ < workload_.jobs.size()) {
    next = workload_.jobs[next_arrival_].spec.submit_time;
  }
  if (!events_.empty()) next = core::Min(next, events_.top().at);
  return next;
}

void Simulation::Complete(const Event& event) {
  const size_t i = event.job;
  if (event.generation != runs_[i].generation) return;  // preempted since
  const SimJob& job = workload_.jobs[i];
  state_.Finish(job.spec.id, event.at);
  if (policy_.predictor) policy_.predictor->Observe(job.spec, job.duration);
  busy_gpus_ -= job.spec.total_gpu().value() / 1000;
  outcomes_[i].finish = event.at;
  outcomes_[i].restart_overhead += runs_[i].run_overhead;
  ++finished_;
}

void Simulation::Arrive(size_t i, Time now) {
  const SimJob& job = workload_.jobs[i];
  // The core sees the loss the simulator charges (core/checkpoint.h).
  core::JobSpec spec = job.spec;
  if (options_.checkpoint_interval) {
    spec.checkpoint_interval = options_.checkpoint_interval;
  } else {
    spec.saves_when_stopped = true;
  }
  if (policy_.predictor) policy_.predictor->Submitted(spec);
  state_.Submit(spec, now);
  runs_[i].queued_since = now;
  JobOutcome& outcome = outcomes_[i];
  outcome.id = job.spec.id;
  outcome.trace_line = job.trace_line;
  outcome.queue = job.spec.queue;
  outcome.gpus = static_cast<int32_t>(job.spec.total_gpu().value() / 1000);
  outcome.submit = job.spec.submit_time;
  outcome.duration = job.duration;
  if (policy_.predictor) outcome.predicted = policy_.predictor->Predict(job.spec);
}

void Simulation::Preempt(JobId id, Time now) {
  const size_t i = IndexOf(id);
  JobRun& run = runs_[i];
  JobOutcome& outcome = outcomes_[i];
  // Useful work of this run, and the part of it saved: what ran after the
  // restart overhead and up to the last checkpoint.
  const Duration useful = core::Max(Duration::Zero(), now - run.run_start - run.run_overhead);
  const Duration saved =
      options_.checkpoint_interval
          ? core::Max(Duration::Zero(),
                      core::LastCheckpoint(state_.Get(id), now) - run.run_start - run.run_overhead)
          : useful;
  outcome.lost_work += useful - saved;
  outcome.restart_overhead += core::Min(now - run.run_start, run.run_overhead);
  run.work_done += saved;
  run.work_done = core::Min(run.work_done, workload_.jobs[i].duration);
  run.queued_since = now;
  ++run.generation;
  state_.Preempt(id, now);
  busy_gpus_ -= workload_.jobs[i].spec.total_gpu().value() / 1000;
  ++outcome.preemptions;
}

void Simulation::Start(const core::JobStart& start, Time now) {
  const size_t i = IndexOf(start.job);
  const SimJob& job = workload_.jobs[i];
  JobRun& run = runs_[i];
  JobOutcome& outcome = outcomes_[i];
  outcome.wait += now - run.queued_since;
  if (!run.started) {
    outcome.first_start = now;
    if (policy_.predictor) policy_.predictor->Started(job.spec.id, now);
    if (plan_etas_[i]) {
      eta_calibrator_.Observe(outcome.submit, *plan_etas_[i], now, outcome.first_eta_interval);
    }
  }
  run.run_overhead = run.started ? core::RestartCost(options_.restart_cost, job.spec.total_gpu())
                                 : Duration::Zero();
  run.started = true;
  run.run_start = now;
  state_.Start(start, now);
  busy_gpus_ += job.spec.total_gpu().value() / 1000;
  events_.push(Event{now + run.run_overhead + (job.duration - run.work_done),
                     EventKind::kCompletion, i, run.generation});
}

void Simulation::Record(Time now) {
  const auto pending = static_cast<int64_t>(state_.pending().size());
  if (!result_.timeline.empty() && result_.timeline.back().at == now) {
    result_.timeline.back() = TimelinePoint{now, pending, busy_gpus_};
    return;
  }
  if (!result_.timeline.empty() && result_.timeline.back().pending_jobs == pending &&
      result_.timeline.back().busy_gpus == busy_gpus_) {
    return;  // a step function: unchanged points add nothing
  }
  result_.timeline.push_back(TimelinePoint{now, pending, busy_gpus_});
}

void Simulation::RecordFirstEtas(const core::Decision& decision, size_t first, size_t end) {
  // Jobs that arrived at this instant and did not start are in `pending`;
  // the arrivals are few, the pending list may be long.
  std::vector<std::pair<JobId, size_t>> arrivals;
  for (size_t i = first; i < end; ++i) arrivals.emplace_back(workload_.jobs[i].spec.id, i);
  std::sort(arrivals.begin(), arrivals.end());
  for (const core::PendingJob& entry : decision.pending) {
    auto it =
        std::lower_bound(arrivals.begin(), arrivals.end(), std::make_pair(entry.job, size_t{0}));
    if (it == arrivals.end() || it->first != entry.job) continue;
    JobOutcome& outcome = outcomes_[it->second];
    outcome.first_eta = entry.eta;
    plan_etas_[it->second] = entry.eta;
    if (entry.eta) {
      const core::EtaEstimate estimate =
          core::EstimateEta(eta_calibrator_, outcome.submit, *entry.eta, entry.latest_eta);
      outcome.first_eta = estimate.expected;
      outcome.first_eta_interval = estimate.interval;
    }
  }
}

Result<SimResult> Simulation::Run() {
  const auto wall_start = std::chrono::steady_clock::now();
  const core::DecideOptions decide_options{core::ExplainLevel::kNone};
  while (true) {
    const Time now = NextTime();
    if (now.is_infinite()) break;
    // Completions first, then arrivals, then the policy's wake-ups.
    while (!events_.empty() && events_.top().at == now &&
           events_.top().kind == EventKind::kCompletion) {
      Complete(events_.top());
      events_.pop();
      ++result_.events;
    }
    const size_t first_arrival = next_arrival_;
    while (next_arrival_ < workload_.jobs.size() &&
           workload_.jobs[next_arrival_].spec.submit_time == now) {
      Arrive(next_arrival_++, now);
      ++result_.events;
    }
    const bool explain = options_.measure_eta && next_arrival_ > first_arrival;
    while (!events_.empty() && events_.top().at == now) {
      wake_ups_.erase(now);
      events_.pop();
      ++result_.events;
    }

    const core::Decision decision =
        core::Decide(state_, now, policy_,
                     explain ? core::DecideOptions{core::ExplainLevel::kFull} : decide_options);
    ++result_.decisions;
    if (explain) RecordFirstEtas(decision, first_arrival, next_arrival_);
    for (const core::Preemption& preemption : decision.preemptions) Preempt(preemption.job, now);
    for (const core::JobStart& start : decision.starts) Start(start, now);
    if (decision.next_decision && wake_ups_.insert(*decision.next_decision).second) {
      events_.push(Event{*decision.next_decision, EventKind::kWakeUp, 0, 0});
    }
    Record(now);

    if (options_.on_progress && result_.decisions % options_.progress_every == 0) {
      options_.on_progress(SimProgress{policy_.name, workload_.partition.name, now,
                                       workload_.jobs.front().spec.submit_time,
                                       workload_.jobs.back().spec.submit_time, finished_,
                                       static_cast<int64_t>(workload_.jobs.size())});
    }
  }
  if (finished_ != static_cast<int64_t>(workload_.jobs.size())) {
    return Internal("simulation of '" + policy_.name + "' stalled with " +
                    std::to_string(workload_.jobs.size() - static_cast<size_t>(finished_)) +
                    " jobs unfinished");
  }
  result_.policy = policy_.name;
  result_.total_gpus = total_gpus_;
  result_.jobs = std::move(outcomes_);
  std::sort(result_.jobs.begin(), result_.jobs.end(),
            [](const JobOutcome& a, const JobOutcome& b) { return a.id < b.id; });
  result_.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return std::move(result_);
}

}  // namespace

Result<SimResult> Simulate(const Workload& workload, std::string_view policy,
                           const SimOptions& options) {
  // The policy weighs restarts as the simulator charges them.
  core::PolicyConfig config = core::InSimulation(options.policy_config);
  config.restart_cost = options.restart_cost;
  Result<core::Policy> made = core::MakePolicy(policy, config);
  if (!made.ok()) return made.status();
  if (!options.queues.empty()) {
    if (Result<core::QuotaTree> tree = core::QuotaTree::Make(options.queues); !tree.ok()) {
      return tree.status();
    }
  }
  Simulation simulation(workload, std::move(made).value(), options);
  return simulation.Run();
}

SimResult MergeResults(std::vector<SimResult> parts) {
  BERTH_CHECK(!parts.empty());
  SimResult merged;
  merged.policy = parts.front().policy;
  // Sum the step functions: sweep the change points of every part in time order.
  struct Change {
    Time at;
    int64_t pending_delta;
    int64_t busy_delta;
  };
  std::vector<Change> changes;
  for (SimResult& part : parts) {
    merged.total_gpus += part.total_gpus;
    merged.events += part.events;
    merged.decisions += part.decisions;
    merged.by_team = merged.by_team || part.by_team;
    merged.wall_seconds += part.wall_seconds;
    for (JobOutcome& job : part.jobs) merged.jobs.push_back(std::move(job));
    TimelinePoint previous;
    for (const TimelinePoint& point : part.timeline) {
      changes.push_back(Change{point.at, point.pending_jobs - previous.pending_jobs,
                               point.busy_gpus - previous.busy_gpus});
      previous = point;
    }
  }
  std::stable_sort(changes.begin(), changes.end(),
                   [](const Change& a, const Change& b) { return a.at < b.at; });
  TimelinePoint current;
  for (const Change& change : changes) {
    current.pending_jobs += change.pending_delta;
    current.busy_gpus += change.busy_delta;
    current.at = change.at;
    if (!merged.timeline.empty() && merged.timeline.back().at == change.at) {
      merged.timeline.back() = current;
    } else {
      merged.timeline.push_back(current);
    }
  }
  std::sort(merged.jobs.begin(), merged.jobs.end(),
            [](const JobOutcome& a, const JobOutcome& b) { return a.id < b.id; });
  return merged;
}

}  // namespace berth::sim
