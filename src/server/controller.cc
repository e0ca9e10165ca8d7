// The Controller's job API and shared bookkeeping. Decision cycles are in
// controller_cycle.cc, how runs end in controller_runs.cc, the agent
// protocol in controller_nodes.cc.
#include "server/controller.h"

#include <algorithm>
#include <future>
#include <set>
#include <string_view>
#include <utility>

#include "common/check.h"
#include "common/ready_future.h"
#include "core/placer.h"
#include "server/event_log.h"
#include "server/explain_text.h"
#include "server/job_messages.h"
#include "server/master_port.h"
#include "server/queue_admission.h"
#include "server/unix_groups.h"

namespace berth::server {

using core::JobId;
using core::JobReason;
using core::JobState;
using store::JobRecord;

namespace {

// What the core needs of a request; the owner and times are the job's.
core::JobSpec CoreSpecOf(const store::JobRequest& request) {
  core::JobSpec spec;
  spec.queue = request.queue;
  spec.name = request.name;
  spec.priority = request.priority;
  spec.tasks = request.tasks;
  spec.task = request.task;
  if (!request.task_shapes.empty()) {
    spec.task_shapes = std::make_shared<const std::vector<core::TaskShape>>(request.task_shapes);
  }
  spec.gpu_types = request.gpu_types;
  if (!request.constraint.empty() || !request.nodelist.empty() || !request.exclude.empty() ||
      request.container) {
    spec.constraints = std::make_shared<const core::NodeConstraints>(core::NodeConstraints{
        request.constraint, request.nodelist, request.exclude, request.container.has_value()});
  }
  spec.gpu_locality =
      request.gpus_in_one_group ? core::GpuLocality::kOneGroup : core::GpuLocality::kAny;
  spec.node_spread =
      request.distinct_nodes ? core::NodeSpread::kDistinctNodes : core::NodeSpread::kAny;
  spec.time_limit = request.time_limit;
  spec.estimate = request.estimate;
  spec.preemptible = request.preemptible;
  spec.grace = request.grace;
  return spec;
}

}  // namespace

Controller::Controller(store::Store& store, const Clock& clock, ControllerOptions options,
                       Metrics* metrics)
    : store_(store),
      clock_(clock),
      wall_at_start_(clock.Now()),
      steady_at_start_(clock.Steady()),
      options_(std::move(options)),
      metrics_(metrics),
      policy_(core::MakePolicy(options_.policy, options_.policy_config).value()),
      state_(options_.cluster),
      eta_book_(metrics) {
  state_.SetUserShares(options_.user_shares);
  if (metrics_ != nullptr) {
    metrics_->DeclareHistogram(
        "berth_queue_wait_seconds", "Time from submission to first start, by queue.",
        {1, 10, 30, 60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 24 * 3600});
    metrics_->DeclareCounter("berth_jobs_finished_total",
                             "Jobs that reached a final state, by state and queue.");
  }
}

core::Time Controller::Now() const {
  return wall_at_start_ + (SteadyTime(clock_.Steady()) - SteadyTime(steady_at_start_));
}

void Controller::SetLeadershipDeadline(
    std::function<std::chrono::steady_clock::time_point()> deadline) {
  std::lock_guard lock(mutex_);
  leadership_deadline_ = std::move(deadline);
}

core::Duration Controller::LeaseToGrantLocked() const {
  const auto now = clock_.Steady();
  const auto from = leadership_deadline_ ? std::min(now, leadership_deadline_()) : now;
  const core::Duration grant = options_.heartbeat_timeout + (SteadyTime(from) - SteadyTime(now));
  return core::Max(grant, core::Duration::Zero());
}

// --- bookkeeping shared by the API, the cycle and the agent protocol ---

std::shared_future<Status> Controller::QueueRecordsLocked(std::vector<JobRecord> records) {
  return store_.QueueJobChanges(std::move(records), std::exchange(unwritten_usage_, {}));
}

std::shared_future<Status> Controller::QueuePersistLocked(
    const std::vector<JobRecord*>& changed_in_order) {
  if (changed_in_order.empty() && unwritten_usage_.empty()) return ReadyFuture(Status::Ok());
  // A job may change twice in one step (a short task reported exited before
  // it was ever seen running): write it once, or its version check fails.
  std::vector<JobRecord*> changed;
  for (JobRecord* job : changed_in_order) {
    if (std::find(changed.begin(), changed.end(), job) == changed.end()) changed.push_back(job);
  }
  std::vector<JobRecord> records;
  records.reserve(changed.size());
  for (const JobRecord* job : changed) records.push_back(*job);
  std::shared_future<Status> durable = QueueRecordsLocked(std::move(records));
  for (JobRecord* job : changed) {
    ++job->version;
    // Every final state passes through here once: the job leaves memory next.
    if (metrics_ != nullptr && core::IsTerminal(job->state)) {
      metrics_->Increment(
          "berth_jobs_finished_total",
          {{"state", std::string(core::JobStateName(job->state))}, {"queue", job->request.queue}});
    }
  }
  return durable;
}

std::shared_future<Status> Controller::QueueCommitLocked(const std::vector<JobRecord*>& changed) {
  std::shared_future<Status> durable = QueuePersistLocked(changed);
  // Ids first: a job may be in `changed` twice, and erasing frees it.
  std::set<JobId> ended;
  for (const JobRecord* job : changed) {
    if (core::IsTerminal(job->state)) ended.insert(job->id);
  }
  for (JobId id : ended) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) continue;
    UnindexPlacementLocked(it->second);
    EraseLiveNameLocked(it->second);
    explained_.erase(id);
    eta_book_.Forget(id);
    jobs_.erase(it);
  }
  return durable;
}

void Controller::SetWakeAgent(std::function<void(const AgentEndpoint&)> wake) {
  std::lock_guard lock(mutex_);
  wake_agent_ = std::move(wake);
}

void Controller::WakeAgentsLocked(const JobRecord& job) {
  if (!wake_agent_) return;
  std::set<std::string> woken;
  for (const store::TaskPlacementRecord& task : job.placement) {
    auto node = nodes_.find(task.node);
    if (node == nodes_.end() || node->second.record.state == core::NodeState::kDown) continue;
    if (!woken.insert(task.node).second) continue;
    wake_agent_(
        AgentEndpoint{task.node, node->second.record.address, node->second.record.logs_key});
  }
}

void Controller::IndexPlacementLocked(JobRecord& job) {
  for (const store::TaskPlacementRecord& task : job.placement) placed_on_[task.node].insert(job.id);
  if (job.placement.empty()) return;
  std::set<int32_t>& taken = master_ports_on_[job.placement.front().node];
  // A recovered job keeps the port its tasks were started with.
  if (!job.master_port || taken.contains(*job.master_port)) {
    job.master_port = ChooseMasterPort(job.id, job.attempts, taken);
  }
  taken.insert(*job.master_port);
}

void Controller::UnindexPlacementLocked(const JobRecord& job) {
  if (!job.placement.empty() && job.master_port) {
    auto ports = master_ports_on_.find(job.placement.front().node);
    if (ports != master_ports_on_.end()) {
      ports->second.erase(*job.master_port);
      if (ports->second.empty()) master_ports_on_.erase(ports);
    }
  }
  for (const store::TaskPlacementRecord& task : job.placement) {
    auto it = placed_on_.find(task.node);
    if (it == placed_on_.end()) continue;
    it->second.erase(job.id);
    if (it->second.empty()) placed_on_.erase(it);
  }
}

Status Controller::CheckCanEverFitLocked(const store::JobRequest& request) const {
  // With no node registered yet there is nothing to judge by: a fresh
  // cluster takes jobs before its agents arrive.
  if (options_.wait_for_nodes || request.wait_for_nodes || state_.nodes().size() == 0) {
    return Status::Ok();
  }
  const core::ResolvedRequest resolved = core::ResolveRequest(state_.nodes(), CoreSpecOf(request));
  if (core::FitsEmptyCluster(state_.nodes(), resolved.request)) return Status::Ok();
  return InvalidArgument(
      DescribeNeverFits(core::TallyEver(state_.nodes(), resolved.request), request));
}

std::shared_ptr<const core::NodeTally> Controller::TallyLocked(const JobRecord& job,
                                                               core::ReasonCode reason) const {
  const bool ever = reason == core::ReasonCode::kInfeasible;
  if (!ever && reason != core::ReasonCode::kResources &&
      reason != core::ReasonCode::kFragmentation && reason != core::ReasonCode::kNodesUnavailable &&
      reason != core::ReasonCode::kReserved) {
    return nullptr;
  }
  const core::ResolvedRequest resolved =
      core::ResolveRequest(state_.nodes(), CoreSpecOf(job.request));
  return std::make_shared<const core::NodeTally>(
      ever ? core::TallyEver(state_.nodes(), resolved.request)
           : core::TallyNow(state_.capacity(), resolved.request));
}

std::optional<core::Placement> Controller::PlacementFromRecordLocked(const JobRecord& job) const {
  core::Placement placement;
  placement.shape = job.request.task;
  if (!job.request.task_shapes.empty()) {
    placement.task_shapes =
        std::make_shared<const std::vector<core::TaskShape>>(job.request.task_shapes);
  }
  for (const store::TaskPlacementRecord& task : job.placement) {
    auto node = nodes_.find(task.node);
    if (node == nodes_.end()) return std::nullopt;
    core::GpuMask gpus = 0;
    for (int32_t gpu : task.gpus) {
      if (gpu < 0 || gpu >= core::kMaxGpusPerNode) return std::nullopt;
      gpus |= core::GpuMask{1} << gpu;
    }
    placement.tasks.push_back(core::TaskPlacement{node->second.id, gpus});
  }
  if (placement.tasks.size() != static_cast<size_t>(job.request.tasks)) return std::nullopt;
  return placement;
}

core::JobSpec Controller::JobSpecOf(const JobRecord& job) {
  core::JobSpec spec = CoreSpecOf(job.request);
  spec.id = job.id;
  spec.user = job.user;
  spec.submit_time = job.submit_time;
  if (job.request.array_max_running) {
    spec.array_limit =
        core::ArrayLimit{job.array_parent.value_or(job.id), *job.request.array_max_running};
  }
  return spec;
}

void Controller::AddToStateLocked(JobRecord& job, core::EarlierRuns earlier) {
  const core::JobSpec spec = JobSpecOf(job);
  if (policy_.predictor) {
    // Live jobs as they arrive. On recovery ReplayJobsLocked has
    // reported every job already, and these calls change nothing; a job an
    // owner requeued after it ended has probed any burst it joins.
    policy_.predictor->Submitted(spec);
    if (job.start_time) policy_.predictor->Started(job.id, *job.start_time);
  }
  state_.Submit(spec, Now(), earlier);
  arrived_since_full_ = true;
  if (job.state == JobState::kHeld) state_.Hold(job.id);
}

void Controller::LeaveCoreLocked(JobId id, core::Time now) {
  if (state_.Find(id) != nullptr) state_.Cancel(id, now);
  if (policy_.predictor) policy_.predictor->Forget(id);
}

Result<JobRecord*> Controller::FindLiveLocked(JobId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return NotFound(JobName(id) + " is not live");
  return &it->second;
}

Status Controller::CheckOwnerLocked(const Principal& who, const JobRecord& job) const {
  if (who.admin() || who.user == job.user) return Status::Ok();
  return Status(StatusCode::kPermissionDenied,
                JobName(job.id) + " belongs to " + job.user + ", not to " + who.user);
}

// --- jobs ---

Result<std::vector<JobId>> Controller::Submit(const Principal& who, Submission submission) {
  if (who.role == store::Role::kAgent) {
    return Status(StatusCode::kPermissionDenied, "agents cannot submit jobs");
  }
  const bool has_dependencies = std::any_of(
      submission.jobs.begin(), submission.jobs.end(), [](const store::JobRequest& request) {
        return !request.depends_on.empty() || request.singleton;
      });
  Submitter submitter(who.user, who.admin(), UnixGroupsOf);
  // NSS may block: the groups are looked up here, outside the lock, when a
  // queue may ask for them (under it only if the queues changed meanwhile).
  if (!who.admin() && queues_admit_by_group_.load()) submitter.groups();
  std::vector<JobRecord> records;
  const core::Time now = Now();
  {
    std::lock_guard lock(mutex_);
    for (store::JobRequest& request : submission.jobs) {
      for (const store::Dependency& dependency : request.depends_on) {
        if (!jobs_.contains(dependency.job) && !ended_.contains(dependency.job) &&
            !store_.GetJob(dependency.job).ok()) {
          return InvalidArgument("depends_on: no job " +
                                 std::to_string(core::Value(dependency.job)));
        }
      }
      if (state_.quotas() != nullptr) {
        BERTH_RETURN_IF_ERROR(AdmitToQueue(*state_.quotas(), submitter, request));
      }
      // The entries of an array share their request: one check answers all.
      if (&request == &submission.jobs.front())
        BERTH_RETURN_IF_ERROR(CheckCanEverFitLocked(request));
      JobRecord record;
      record.user = who.user;
      record.request = std::move(request);
      record.submit_time = now;
      record.state = JobState::kPending;
      if (!record.request.depends_on.empty() || record.request.singleton) {
        record.state = JobState::kHeld;
        record.reason = JobReason::kDependency;
        record.message = "waiting for the jobs it depends on";
      } else if (record.request.hold) {
        record.state = JobState::kHeld;
        record.reason = JobReason::kHeld;
        record.message = "held until released";
      }
      records.push_back(std::move(record));
    }
  }
  // Durable before acknowledged; outside the lock so concurrent submits
  // share one commit.
  Result<std::vector<JobId>> ids = store_.SubmitJobs(who.user, submission.idempotency_key, records);
  if (!ids.ok()) return ids.status();
  {
    std::lock_guard lock(mutex_);
    for (size_t i = 0; i < ids->size() && i < records.size(); ++i) {
      const JobId id = (*ids)[i];
      if (KnownJobLocked(id)) continue;  // an idempotent retry
      JobRecord& job = jobs_[id] = std::move(records[i]);
      job.id = id;
      job.version = 1;
      if (submission.jobs.size() > 1 && i > 0) job.array_parent = (*ids)[0];
      AddLiveNameLocked(job);
      AddToStateLocked(job);
      if (job.state == JobState::kHeld && job.reason == JobReason::kDependency) {
        awaiting_dependencies_.insert(id);
      }
      LogEvent("job_submitted", {{"job", std::to_string(core::Value(id))},
                                 {"user", job.user},
                                 {"queue", job.request.queue},
                                 {"tasks", std::to_string(job.request.tasks)},
                                 {"gpu_milli", std::to_string(job.request.task.gpu.value())}});
    }
    // Dependencies that already ended. Only when the submission has any:
    // the walk is over every live job, and most submits have none.
    if (has_dependencies) {
      std::vector<JobRecord*> changed;
      ReleaseDependentsLocked(changed);
      BERTH_RETURN_IF_ERROR(CommitLocked(changed));
    }
    // A cycle has nothing to do for held jobs: wake the scheduler only for
    // jobs that can run (new ones, or held ones whose dependencies ended).
    const bool runnable = std::any_of(ids->begin(), ids->end(), [this](JobId id) {
      auto it = jobs_.find(id);
      return it != jobs_.end() && it->second.state == JobState::kPending;
    });
    if (runnable) WakeLocked();
  }
  return ids;
}

Result<JobView> Controller::GetJob(const Principal& who, JobId id) {
  (void)who;  // everyone sees the queue; the API layer hides others' env and logs
  {
    std::lock_guard lock(mutex_);
    if (auto it = jobs_.find(id); it != jobs_.end()) {
      return ViewLocked(it->second, Detail::kWithNodes);
    }
  }
  BERTH_ASSIGN_OR_RETURN(JobRecord stored, store_.GetJob(id));
  return JobView{std::move(stored), std::nullopt, nullptr};
}

JobView Controller::ViewLocked(const JobRecord& job, Detail detail) const {
  JobView view{job, std::nullopt, nullptr};
  const core::PendingJob* pending = explained_.find(job.id);
  if (pending != nullptr && job.state == JobState::kPending) {
    view.waiting = pending->reason;
    if (detail == Detail::kWithNodes) view.nodes = TallyLocked(job, pending->reason);
    view.record.message =
        DescribePending(ShownAt(*pending, Now()), job, Now(), view.nodes.get(), state_.quotas());
  }
  return view;
}

Result<std::vector<JobView>> Controller::ListJobs(const Principal& who, store::JobFilter filter) {
  (void)who;  // everyone sees the queue; the API layer hides others' env and logs
  if (!filter.live_only) {
    // The store has every job (read outside the lock: the scheduler goes
    // on). Reasons and messages change every cycle in memory only: take
    // the jobs still live from there.
    BERTH_ASSIGN_OR_RETURN(std::vector<JobRecord> stored, store_.ListJobs(filter));
    std::vector<JobView> out;
    out.reserve(stored.size());
    std::lock_guard lock(mutex_);
    for (JobRecord& job : stored) {
      auto it = jobs_.find(job.id);
      out.push_back(it != jobs_.end() ? ViewLocked(it->second, Detail::kListing)
                                      : JobView{std::move(job), std::nullopt, nullptr});
    }
    return out;
  }
  std::lock_guard lock(mutex_);
  std::vector<JobView> out;
  for (const auto& [id, job] : jobs_) {
    if (filter.after && id <= *filter.after) continue;
    if (filter.state && job.state != *filter.state) continue;
    if (filter.user && job.user != *filter.user) continue;
    if (filter.queue && job.request.queue != *filter.queue) continue;
    out.push_back(ViewLocked(job, Detail::kListing));
    if (static_cast<int32_t>(out.size()) >= filter.limit) break;
  }
  return out;
}

Result<JobRecord*> Controller::FindOwnLiveLocked(const Principal& who, JobId id) {
  Result<JobRecord*> found = FindLiveLocked(id);
  if (!found.ok()) {
    Result<JobRecord> stored = store_.GetJob(id);
    if (!stored.ok()) return NotFound(JobName(id) + " does not exist");
    BERTH_RETURN_IF_ERROR(CheckOwnerLocked(who, *stored));
    return FailedPrecondition(JobName(id) + " already ended (" +
                              std::string(core::JobStateName(stored->state)) + ")");
  }
  BERTH_RETURN_IF_ERROR(CheckOwnerLocked(who, **found));
  return found;
}

Status Controller::Cancel(const Principal& who, JobId id) {
  std::lock_guard lock(mutex_);
  BERTH_ASSIGN_OR_RETURN(JobRecord * found, FindOwnLiveLocked(who, id));
  JobRecord& job = *found;
  std::vector<JobRecord*> changed{&job};
  if (job.state == JobState::kPending || job.state == JobState::kHeld) {
    job.state = JobState::kCancelled;
    job.reason = JobReason::kCancelled;
    job.message = "cancelled by " + who.user;
    job.end_time = Now();
  } else if (job.state != JobState::kCompleting || job.reason != JobReason::kCancelled) {
    // Running: the agents stop it (SIGTERM, grace, SIGKILL) and report.
    job.state = JobState::kCompleting;
    job.reason = JobReason::kCancelled;
    job.message = "cancelled by " + who.user + "; stopping";
  } else {
    return Status::Ok();  // already being cancelled
  }
  BERTH_RETURN_IF_ERROR(PersistLocked(changed));
  if (job.state == JobState::kCompleting) WakeAgentsLocked(job);
  if (job.state == JobState::kCancelled) {
    LeaveCoreLocked(id, Now());
    RememberEndedLocked(id, job.state);
    explained_.erase(id);
    eta_book_.Forget(id);
    EraseLiveNameLocked(job);
    jobs_.erase(id);
    std::vector<JobRecord*> released;
    ReleaseDependentsLocked(released);
    BERTH_RETURN_IF_ERROR(CommitLocked(released));
  }
  WakeLocked();
  return Status::Ok();
}

Status Controller::Release(const Principal& who, JobId id) {
  std::lock_guard lock(mutex_);
  BERTH_ASSIGN_OR_RETURN(JobRecord * job, FindOwnLiveLocked(who, id));
  if (job->state == JobState::kHeld && job->reason == JobReason::kDependency && job->request.hold) {
    // Held by its owner and by dependencies: releasing lifts the first; it
    // starts once the jobs it depends on have ended.
    job->request.hold = false;
    job->message = "released; waiting for the jobs it depends on";
    return PersistLocked({job});
  }
  if (job->state != JobState::kHeld || job->reason != JobReason::kHeld) {
    return FailedPrecondition(JobName(id) + " is not held by a user (state " +
                              std::string(core::JobStateName(job->state)) + ")");
  }
  job->request.hold = false;
  if ((job->request.depends_on.empty() && !job->request.singleton) ||
      CheckDependenciesLocked(*job) == Dependencies::kMet) {
    job->state = JobState::kPending;
    job->reason = JobReason::kNone;
    job->message.clear();
  } else {
    job->reason = JobReason::kDependency;
    job->message = "waiting for the jobs it depends on";
    awaiting_dependencies_.insert(id);
  }
  BERTH_RETURN_IF_ERROR(PersistLocked({job}));
  if (job->state == JobState::kPending) {
    state_.Release(id);
    arrived_since_full_ = true;
  }
  WakeLocked();
  return Status::Ok();
}

Result<Explanation> Controller::Explain(const Principal& who, JobId id) {
  BERTH_ASSIGN_OR_RETURN(JobView job, GetJob(who, id));
  Explanation explanation;
  explanation.reason = std::string(job.reason());
  explanation.message = job.record.message;
  explanation.job = std::move(job);
  std::lock_guard lock(mutex_);
  if (const core::PendingJob* pending = explained_.find(id);
      pending != nullptr && explanation.job.record.state == JobState::kPending) {
    explanation.position = pending->position;
    explanation.blocker = pending->blocker;
    const core::PendingJob shown = ShownAt(*pending, Now());
    explanation.eta = shown.eta;
    explanation.eta_interval = shown.eta_interval;
    explanation.nodes = explanation.job.nodes;
  }
  return explanation;
}

std::map<JobId, core::PendingJob> Controller::PendingViews(const std::vector<JobId>& ids) {
  std::lock_guard lock(mutex_);
  std::map<JobId, core::PendingJob> views;
  for (JobId id : ids) {
    auto job = jobs_.find(id);
    const core::PendingJob* pending = explained_.find(id);
    if (job != jobs_.end() && pending != nullptr && job->second.state == JobState::kPending) {
      views.emplace(id, ShownAt(*pending, Now()));
    }
  }
  return views;
}

// --- wake-ups ---

void Controller::Notify() {
  std::lock_guard lock(mutex_);
  WakeLocked();
}

void Controller::WakeLocked() {
  work_pending_ = true;
  if (!unseen_since_) unseen_since_ = std::chrono::steady_clock::now();
  work_.notify_all();
}

void Controller::WaitForWork(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  work_.wait_for(lock, timeout, [this] { return work_pending_; });
  work_pending_ = false;
}

Controller::Stats Controller::GetStats() {
  // Every scrape and history sample walks every live job and node under
  // the lock (120k jobs at 10k nodes): count without a string per job or
  // a lookup by name per task, so the scheduler is held up briefly.
  std::lock_guard lock(mutex_);
  Stats stats;
  std::map<std::pair<JobState, std::string_view>, int64_t> by_state;
  for (const auto& [id, job] : jobs_) ++by_state[{job.state, job.request.queue}];
  for (const auto& [key, count] : by_state) {
    stats.jobs_by_state_and_queue[{std::string(core::JobStateName(key.first)),
                                   std::string(key.second)}] += count;
  }
  std::vector<int64_t> allocated(state_.nodes().size(), 0);
  for (const auto& [id, job] : state_.running()) {
    for (const core::TaskPlacement& task : job->placement.tasks) {
      allocated[core::Index(task.node)] += core::CountGpus(task.gpus);
    }
  }
  for (const auto& [name, node] : nodes_) {  // by name, as stats.nodes
    NodeGpus& gpus = stats.nodes.emplace_hint(stats.nodes.end(), name, NodeGpus{})->second;
    const core::NodeSpec& spec = state_.nodes().spec(node.id);
    gpus.gpu_type = spec.gpu_type;
    gpus.state = std::string(core::NodeStateName(node.record.state));
    gpus.total = static_cast<int64_t>(spec.gpus.size());
    gpus.allocated = allocated[core::Index(node.id)];
    for (const core::GpuDevice& gpu : spec.gpus) {
      if (gpu.health == core::GpuHealth::kHealthy) ++gpus.healthy;
    }
  }
  const core::Time now = Now();
  const core::UsageLedger& usage = state_.usage();
  for (const auto& [queue, account] : usage.queues()) {
    stats.queue_usage[queue] = usage.QueueUsage(queue, now);
  }
  for (const auto& [user, account] : usage.users()) {
    stats.user_usage[user] = usage.UserUsage(user, now);
  }
  stats.cycles = cycles_;
  return stats;
}

WaitHistogram Controller::TakeStartWaits() {
  std::lock_guard lock(mutex_);
  return std::exchange(start_waits_, {});
}

Result<LogLocation> Controller::LocateLog(const Principal& who, JobId id, int32_t task) {
  BERTH_ASSIGN_OR_RETURN(JobView view, GetJob(who, id));
  const JobRecord& job = view.record;
  std::lock_guard lock(mutex_);
  BERTH_RETURN_IF_ERROR(CheckOwnerLocked(who, job));
  if (job.placement.empty()) {
    return FailedPrecondition(JobName(id) + " has not started: no logs yet");
  }
  if (task < 0 || static_cast<size_t>(task) >= job.placement.size()) {
    return InvalidArgument("task: " + JobName(id) + " has tasks 0.." +
                           std::to_string(job.placement.size() - 1) + ", not " +
                           std::to_string(task));
  }
  const std::string& node = job.placement[static_cast<size_t>(task)].node;
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return NotFound("node '" + node + "' of " + JobName(id) + " is gone");
  return LogLocation{AgentEndpoint{node, it->second.record.address, it->second.record.logs_key},
                     it->second.record.state != core::NodeState::kDown};
}

}  // namespace berth::server
