// Nodes and the agent protocol: registration, heartbeats that carry the
// node's truth, and the desired state sent back; recovery after a restart.
#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "common/check.h"
#include "core/constraint.h"
#include "server/controller.h"
#include "server/event_log.h"
#include "server/master_port.h"
#include "server/queue_admission.h"
#include "server/run_outcome.h"
#include "server/spec_text.h"
#include "server/task_launch.h"

namespace berth::server {

// What an agent sent comes back escaped in messages.
using spec_text::Quote;

using core::JobId;
using core::JobReason;
using core::JobState;
using store::JobRecord;

namespace {

core::NodeSpec SpecFrom(const NodeRegistration& registration) {
  core::NodeSpec spec;
  spec.name = registration.node;
  spec.gpu_type = registration.gpu_type;
  spec.cpu = registration.cpu;
  spec.memory = registration.memory;
  spec.labels = registration.labels;
  spec.features = {registration.features.begin(), registration.features.end()};
  spec.container_runtime = registration.container_runtime;
  std::vector<GpuReport> gpus = registration.gpus;
  std::sort(gpus.begin(), gpus.end(),
            [](const GpuReport& a, const GpuReport& b) { return a.index < b.index; });
  for (const GpuReport& gpu : gpus) {
    spec.gpus.push_back(
        core::GpuDevice{gpu.index, gpu.interconnect_group,
                        gpu.healthy ? core::GpuHealth::kHealthy : core::GpuHealth::kUnhealthy});
  }
  return spec;
}

}  // namespace

Status Controller::Recover() {
  std::lock_guard lock(mutex_);
  const core::Time now = Now();
  BERTH_ASSIGN_OR_RETURN(std::vector<core::QueueSpec> queues, store_.ListQueues());
  if (!queues.empty()) {
    BERTH_ASSIGN_OR_RETURN(core::QuotaTree tree, core::QuotaTree::Make(std::move(queues)));
    SetQuotasLocked(std::move(tree));
  }
  BERTH_ASSIGN_OR_RETURN(std::vector<store::NodeRecord> nodes, store_.ListNodes());
  for (store::NodeRecord& record : nodes) {
    // Agents get a full timeout to reach the new server before their nodes
    // count as lost.
    record.last_heartbeat = now;
    const core::NodeId id = state_.AddNode(record.spec);
    if (record.drained) state_.SetNodeState(id, core::NodeState::kDraining);
    if (record.state == core::NodeState::kDown) {
      state_.SetNodeState(id, core::NodeState::kDown);
    } else {
      silence_.Heard(id, now);
    }
    node_names_[id] = record.name;
    const std::string name = record.name;
    nodes_[name] = NodeEntry{std::move(record), id};
  }
  // Each job's runs that ended, added up: a live job's earlier runs (its
  // attained service; those older than the history read are not counted).
  std::map<JobId, core::Duration> run_times;
  BERTH_RETURN_IF_ERROR(ReadHistoryLocked(now, run_times));
  // Ended jobs are not loaded; a retried submission of one is told by its id.
  BERTH_ASSIGN_OR_RETURN(ended_forgotten_up_to_, store_.LastJobId());
  store::JobFilter filter;
  filter.live_only = true;
  filter.limit = 1000;
  std::vector<JobRecord*> changed;
  while (true) {
    BERTH_ASSIGN_OR_RETURN(std::vector<JobRecord> page, store_.ListJobs(filter));
    for (JobRecord& record : page) {
      const JobId id = record.id;
      JobRecord& job = jobs_[id] = std::move(record);
      AddLiveNameLocked(job);
      const auto ran = run_times.find(id);
      AddToStateLocked(
          job, {ran == run_times.end() ? core::Duration::Zero() : ran->second, job.preemptions});
      if (job.state == JobState::kHeld && job.reason == JobReason::kDependency) {
        awaiting_dependencies_.insert(id);
      }
      if (job.state == JobState::kPending || job.state == JobState::kHeld) continue;
      // It was placed: keep it running where it is, unless its placement no
      // longer fits this cluster.
      std::optional<core::Placement> placement = PlacementFromRecordLocked(job);
      IndexPlacementLocked(job);
      if (placement && state_.capacity().CanAllocate(*placement)) {
        state_.Start(id, *placement, job.start_time.value_or(now));
        if (job.state == JobState::kCompleting) state_.MarkStopping(id);
        if (job.last_checkpoint) state_.ReportCheckpoint(id, *job.last_checkpoint);
      } else {
        LoseNodeLocked(job, job.placement.empty() ? "" : job.placement.front().node, changed);
      }
    }
    if (page.size() < static_cast<size_t>(filter.limit)) break;
    filter.after = page.back().id;
  }
  return CommitLocked(changed);
}

void Controller::RestartNodeLeases() {
  std::lock_guard lock(mutex_);
  const core::Time now = Now();
  for (const auto& [name, entry] : nodes_) {
    if (entry.record.state != core::NodeState::kDown) silence_.Heard(entry.id, now);
  }
}

Result<core::Duration> Controller::RegisterNode(const Principal& agent,
                                                NodeRegistration registration) {
  if (agent.role != store::Role::kAgent && !agent.admin()) {
    return Status(StatusCode::kPermissionDenied, "only agents register nodes");
  }
  if (agent.role == store::Role::kAgent && agent.node != registration.node) {
    return Status(StatusCode::kPermissionDenied, "this agent's token is for node " +
                                                     Quote(agent.node) + ", not " +
                                                     Quote(registration.node));
  }
  if (registration.gpus.size() > static_cast<size_t>(core::kMaxGpusPerNode)) {
    return InvalidArgument("gpus: at most " + std::to_string(core::kMaxGpusPerNode));
  }
  for (size_t i = 0; i < registration.gpus.size(); ++i) {
    bool found = false;
    for (const GpuReport& gpu : registration.gpus) found |= gpu.index == static_cast<int32_t>(i);
    if (!found)
      return InvalidArgument("gpus: indices must be 0..n-1, missing " + std::to_string(i));
  }
  if (registration.features.size() > 64) return InvalidArgument("features: at most 64");
  for (const std::string& feature : registration.features) {
    if (!core::IsFeatureName(feature)) {
      return InvalidArgument("features: " + Quote(feature) +
                             " is not a feature name (1..64 of A-Z a-z 0-9 _ - . : / + =)");
    }
  }
  std::lock_guard lock(mutex_);
  const core::Time now = Now();
  // Granted when heard (below): the node's lease ends before now + lease.
  const core::Duration lease = LeaseToGrantLocked();
  auto it = nodes_.find(registration.node);
  if (it != nodes_.end()) {
    // A known node (agent restart): its shape must not change under running work.
    NodeEntry& entry = it->second;
    const core::NodeSpec spec = SpecFrom(registration);
    if (spec.gpus.size() != entry.record.spec.gpus.size() ||
        spec.gpu_type != entry.record.spec.gpu_type) {
      return FailedPrecondition("node '" + registration.node +
                                "' registered before with a different GPU inventory; drain it "
                                "and remove it first");
    }
    entry.record.address = registration.address;
    entry.record.logs_key = registration.logs_key;
    // Labels and features may change with an agent's restart (an operator
    // added one); constraints match the new ones from the next cycle.
    entry.record.spec.labels = spec.labels;
    entry.record.spec.features = spec.features;
    entry.record.spec.container_runtime = spec.container_runtime;
    state_.SetNodeAttributes(entry.id, spec.labels, spec.features, spec.container_runtime);
    entry.record.last_heartbeat = now;
    silence_.Heard(entry.id, now);
    if (entry.record.state == core::NodeState::kDown) {
      entry.record.state = core::NodeState::kUp;
      state_.SetNodeState(entry.id,
                          entry.record.drained ? core::NodeState::kDraining : core::NodeState::kUp);
    }
    BERTH_RETURN_IF_ERROR(store_.PutNode(entry.record));
  } else {
    store::NodeRecord record;
    record.name = registration.node;
    record.address = registration.address;
    record.logs_key = registration.logs_key;
    record.spec = SpecFrom(registration);
    record.state = core::NodeState::kUp;
    record.last_heartbeat = now;
    BERTH_RETURN_IF_ERROR(store_.PutNode(record));
    const core::NodeId id = state_.AddNode(record.spec);
    node_names_[id] = record.name;
    silence_.Heard(id, now);
    const std::string name = record.name;  // the key, before record moves
    nodes_[name] = NodeEntry{std::move(record), id};
  }
  LogEvent("node_registered", {{"node", registration.node},
                               {"address", registration.address},
                               {"gpus", std::to_string(registration.gpus.size())},
                               {"gpu_type", registration.gpu_type}});
  WakeLocked();
  return lease;
}

void Controller::ProcessTaskReportsLocked(const std::string& node,
                                          const std::vector<TaskReport>& tasks,
                                          DesiredState& desired, std::vector<JobRecord*>& changed) {
  std::set<JobId> touched;
  for (const TaskReport& report : tasks) {
    auto it = jobs_.find(report.job);
    const bool current = it != jobs_.end() && report.attempt == it->second.attempts &&
                         report.task >= 0 &&
                         static_cast<size_t>(report.task) < it->second.placement.size() &&
                         it->second.placement[static_cast<size_t>(report.task)].node == node;
    if (!current) {
      // Fencing: a task of a job that ended, was requeued elsewhere or never
      // ran here. Stop it so a job never runs twice.
      if (report.phase == TaskPhase::kRunning) {
        LogWarning("task_fenced", {{"node", node},
                                   {"job", std::to_string(core::Value(report.job))},
                                   {"task", std::to_string(report.task)},
                                   {"attempt", std::to_string(report.attempt)}});
        desired.stop.push_back(
            TaskStop{report.job, report.task, report.attempt, core::Duration::Seconds(0)});
      }
      continue;
    }
    const std::pair<JobId, int32_t> key{report.job, report.task};
    if (report.phase == TaskPhase::kRunning && !report.starting.empty()) {
      // Still getting ready on its node (pulling its image): the job is
      // starting, and says what it waits for.
      JobRecord& job = it->second;
      const std::string message = "starting: " + report.starting;
      if (job.state == JobState::kStarting && job.message != message) {
        job.message = message;
        changed.push_back(&job);
      }
      continue;
    }
    if (report.phase == TaskPhase::kRunning) {
      running_tasks_.insert(key);
      // Any task's file counts: a gang usually saves from one rank.
      if (report.checkpoint_age &&
          RecordCheckpointLocked(it->second, Now() - *report.checkpoint_age)) {
        changed.push_back(&it->second);
      }
    } else {
      running_tasks_.erase(key);
      exits_[key] = report;
    }
    touched.insert(report.job);
  }
  for (JobId id : touched) {
    JobRecord& job = jobs_.at(id);
    if (job.state != JobState::kCompleting && StoppedByLeaseLocked(job)) {
      // The node stopped it when its lease ended (it could not reach us in
      // time): its run is lost as with a node that went down, and the next
      // run has a new attempt.
      LoseNodeLocked(job, node, changed);
      continue;
    }
    int32_t exited = 0;
    int32_t failed = 0;
    int32_t running = 0;
    // A batch job ends with its script (task 0): the holders stopped then
    // are not failures.
    const auto script_exit = exits_.find({id, 0});
    const bool script_ended = job.request.batch && script_exit != exits_.end();
    for (int32_t task = 0; task < job.request.tasks; ++task) {
      if (auto exit = exits_.find({id, task}); exit != exits_.end()) {
        ++exited;
        if (TaskFailed(exit->second) && (!script_ended || task == 0)) ++failed;
      } else if (running_tasks_.contains({id, task})) {
        ++running;
      }
    }
    if (job.state == JobState::kStarting && running + exited == job.request.tasks) {
      job.state = JobState::kRunning;
      if (job.message.starts_with("starting: ")) job.message.clear();
      changed.push_back(&job);
    }
    const bool all_exited = exited == job.request.tasks;
    if (script_ended && failed == 0 && !all_exited && job.state != JobState::kCompleting) {
      job.state = JobState::kCompleting;
      job.reason = JobReason::kExited;
      job.message = "the batch script ended; stopping the job's other tasks";
      changed.push_back(&job);
      WakeAgentsLocked(job);
    }
    if (failed > 0 && !all_exited && job.state != JobState::kCompleting) {
      // One task of a gang failed: the gang cannot go on; stop the rest.
      job.state = JobState::kCompleting;
      job.reason = JobReason::kTaskFailed;
      job.message = "a task failed; stopping the others";
      changed.push_back(&job);
      WakeAgentsLocked(job);
    }
    if (!all_exited) continue;
    if (job.state == JobState::kCompleting &&
        (job.reason == JobReason::kPreempted || job.reason == JobReason::kRequeued)) {
      RequeueLocked(job, job.reason, changed);
    } else if (job.state == JobState::kCompleting && job.reason == JobReason::kCancelled) {
      // How task 0 ended is the job's (Slurm's batch step), for scripts
      // that read the exit code of a cancelled job.
      const TaskReport& exit = exits_.at({id, 0});
      job.exit_code = exit.exit_code;
      job.signal = exit.signal;
      const std::string message = CancelledMessage(job, 0, exit);
      EndRunLocked(job, JobState::kCancelled, JobReason::kCancelled, changed);
      job.message = message;
    } else if (failed > 0 || job.reason == JobReason::kTaskFailed) {
      int32_t first = 0;
      while (!script_ended && first + 1 < job.request.tasks &&
             !TaskFailed(exits_.at({id, first}))) {
        ++first;
      }
      const TaskReport& exit = exits_.at({id, first});
      job.exit_code = exit.exit_code;
      job.signal = exit.signal;
      const std::string message = FailureMessage(job, first, exit);
      // A run stopped at its time limit is a timeout, never retried (as in
      // Slurm: it would run into the same limit).
      const bool timed_out = exit.outcome == TaskOutcome::kTimeLimit;
      EndRunLocked(job, timed_out ? JobState::kTimeout : JobState::kFailed,
                   FailureReason(exit.outcome), changed,
                   timed_out ? Retry::kNever : Retry::kAllowed);
      // (A retry keeps the message that says it is retrying.)
      if (core::IsTerminal(job.state)) job.message = message;
    } else {
      job.exit_code = 0;
      job.signal.reset();
      EndRunLocked(job, JobState::kSucceeded, JobReason::kExited, changed);
    }
  }
}

bool Controller::StoppedByLeaseLocked(const JobRecord& job) const {
  for (int32_t task = 0; task < job.request.tasks; ++task) {
    auto exit = exits_.find({job.id, task});
    if (exit != exits_.end() && exit->second.outcome == TaskOutcome::kLeaseExpired) return true;
  }
  return false;
}

void Controller::LoseVanishedTasksLocked(const std::string& node,
                                         const std::vector<TaskReport>& tasks,
                                         std::vector<JobRecord*>& changed) {
  auto here = placed_on_.find(node);
  if (here == placed_on_.end()) return;
  std::set<std::pair<JobId, int32_t>> reported;
  for (const TaskReport& report : tasks) {
    auto it = jobs_.find(report.job);
    if (it != jobs_.end() && report.attempt == it->second.attempts) {
      reported.emplace(report.job, report.task);
    }
  }
  const std::set<JobId> placed = here->second;  // a copy: losing a job unindexes it
  for (JobId id : placed) {
    JobRecord& job = jobs_.at(id);
    if (job.state != JobState::kStarting && job.state != JobState::kRunning) continue;
    for (size_t task = 0; task < job.placement.size(); ++task) {
      if (job.placement[task].node != node) continue;
      const std::pair<JobId, int32_t> key{id, static_cast<int32_t>(task)};
      // Known to have run here: the job runs (every task was reported), or
      // this task was. Not yet reported is a start still on its way.
      const bool ran = job.state == JobState::kRunning || running_tasks_.contains(key);
      if (!ran || reported.contains(key) || exits_.contains(key)) continue;
      LogWarning("task_vanished", {{"node", node},
                                   {"job", std::to_string(core::Value(id))},
                                   {"task", std::to_string(task)},
                                   {"attempt", std::to_string(job.attempts)}});
      LoseNodeLocked(job, node, changed);
      break;
    }
  }
}

DesiredState Controller::DesiredForLocked(const std::string& node) const {
  DesiredState desired;
  auto here = placed_on_.find(node);
  if (here == placed_on_.end()) return desired;
  for (JobId id : here->second) {
    const JobRecord& job = jobs_.at(id);
    // Distinct nodes in rank order, for NODE_RANK.
    std::vector<std::string> job_nodes;
    for (const store::TaskPlacementRecord& task : job.placement) {
      if (std::find(job_nodes.begin(), job_nodes.end(), task.node) == job_nodes.end()) {
        job_nodes.push_back(task.node);
      }
    }
    const std::string& master_node = job.placement.front().node;
    const std::string master_addr = nodes_.at(master_node).record.address;
    for (size_t task = 0; task < job.placement.size(); ++task) {
      const store::TaskPlacementRecord& placed = job.placement[task];
      if (placed.node != node) continue;
      const auto task_id = static_cast<int32_t>(task);
      if (exits_.contains({id, task_id})) continue;
      if (job.state == JobState::kCompleting) {
        desired.stop.push_back(TaskStop{id, task_id, job.attempts, job.request.grace});
        continue;
      }
      TaskAssignment assignment;
      assignment.job = id;
      assignment.task = task_id;
      assignment.attempt = job.attempts;
      assignment.user = job.user;
      assignment.launch = TaskLaunchFor(job, task_id);
      for (const store::SignalRecord& sent : job.signals) {
        assignment.signals.push_back(protocol::SignalRequest{sent.id, sent.name, sent.batch_only});
      }
      if (job.request.batch && task_id > 0) HoldShareInstead(assignment.launch);
      assignment.steps = StepLaunchesLocked(job, task_id);
      assignment.gpus = placed.gpus;
      assignment.world_size = job.request.tasks;
      assignment.master_addr = master_addr.substr(0, master_addr.rfind(':'));
      assignment.master_port = job.master_port.value_or(ChooseMasterPort(id, job.attempts, {}));
      assignment.node_rank = static_cast<int32_t>(
          std::find(job_nodes.begin(), job_nodes.end(), node) - job_nodes.begin());
      for (size_t other = 0; other < job.placement.size(); ++other) {
        if (job.placement[other].node != node) continue;
        if (other < task) ++assignment.local_rank;
        if (other != task) ++assignment.local_world_size;
      }
      desired.run.push_back(std::move(assignment));
    }
  }
  return desired;
}

Result<DesiredState> Controller::HandleHeartbeat(const Principal& agent, Heartbeat heartbeat) {
  if (agent.role != store::Role::kAgent || agent.node != heartbeat.node) {
    return Status(StatusCode::kPermissionDenied,
                  "only the agent of node " + Quote(heartbeat.node) + " may report for it");
  }
  DesiredState wanted;
  std::shared_future<Status> durable;
  {
    std::lock_guard lock(mutex_);
    BERTH_ASSIGN_OR_RETURN(wanted, HeartbeatLocked(heartbeat));
    // Everything the answer says, and this report's own changes, must be
    // durable before the agent acts on it: the flush is waited for here,
    // outside the lock, so other requests and cycles go on meanwhile.
    durable = store_.Barrier();
  }
  // Through a database outage the report stays queued (it is written when
  // the database returns); the agent hears so within a bound, rather than
  // holding a worker the other agents need.
  if (durable.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    return Unavailable("the store cannot be written now (" + store_.write_outage().message() +
                       "); this report is queued, keep running and report again");
  }
  BERTH_RETURN_IF_ERROR(durable.get());
  return wanted;
}

Result<DesiredState> Controller::HeartbeatLocked(const Heartbeat& heartbeat) {
  auto it = nodes_.find(heartbeat.node);
  if (it == nodes_.end()) {
    return NotFound("node " + Quote(heartbeat.node) + " is not registered; register first");
  }
  NodeEntry& entry = it->second;
  // Heard at our monotonic now (Now()): the node's lease, counted from
  // before this request left it, ends before this plus the lease.
  entry.record.last_heartbeat = Now();
  silence_.Heard(entry.id, entry.record.last_heartbeat);
  if (entry.record.state == core::NodeState::kDown) {
    entry.record.state = core::NodeState::kUp;
    state_.SetNodeState(entry.id,
                        entry.record.drained ? core::NodeState::kDraining : core::NodeState::kUp);
    BERTH_RETURN_IF_ERROR(store_.PutNode(entry.record));
  }
  for (const GpuReport& gpu : heartbeat.gpus) {
    if (gpu.index < 0 || static_cast<size_t>(gpu.index) >= entry.record.spec.gpus.size()) {
      return InvalidArgument("gpus: no GPU " + std::to_string(gpu.index) + " on this node");
    }
    const core::GpuHealth health =
        gpu.healthy ? core::GpuHealth::kHealthy : core::GpuHealth::kUnhealthy;
    if (entry.record.spec.gpus[static_cast<size_t>(gpu.index)].health != health) {
      entry.record.spec.gpus[static_cast<size_t>(gpu.index)].health = health;
      state_.SetGpuHealth(entry.id, gpu.index, health);
      BERTH_RETURN_IF_ERROR(store_.PutNode(entry.record));
    }
  }
  DesiredState desired;
  std::vector<JobRecord*> changed;
  ProcessStepReportsLocked(heartbeat.node, heartbeat.steps, changed);
  ProcessTaskReportsLocked(heartbeat.node, heartbeat.tasks, desired, changed);
  // A task that ran here and that the node no longer knows (its state dir
  // was emptied): its run is lost; the next one gets a new attempt, never
  // the same one again.
  LoseVanishedTasksLocked(heartbeat.node, heartbeat.tasks, changed);
  if (dependencies_unchecked_) ReleaseDependentsLocked(changed);
  // Queued only: HandleHeartbeat waits for it after releasing the lock.
  (void)QueueCommitLocked(changed);
  DesiredState wanted = DesiredForLocked(heartbeat.node);
  wanted.stop.insert(wanted.stop.end(), desired.stop.begin(), desired.stop.end());
  wanted.lease = LeaseToGrantLocked();
  if (!changed.empty()) {
    WakeLocked();
  }
  return wanted;
}

Status Controller::SetDrained(const Principal& who, const std::string& node, DrainAction action) {
  if (!who.admin()) return Status(StatusCode::kPermissionDenied, "only admins drain nodes");
  std::lock_guard lock(mutex_);
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return NotFound("node '" + node + "' does not exist");
  NodeEntry& entry = it->second;
  entry.record.drained = action == DrainAction::kDrain;
  BERTH_RETURN_IF_ERROR(store_.PutNode(entry.record));
  if (entry.record.state != core::NodeState::kDown) {
    state_.SetNodeState(entry.id,
                        entry.record.drained ? core::NodeState::kDraining : core::NodeState::kUp);
  }
  WakeLocked();
  return Status::Ok();
}

Result<std::vector<NodeView>> Controller::ListNodes(const Principal& who) {
  (void)who;
  std::lock_guard lock(mutex_);
  std::vector<NodeView> out;
  for (const auto& [name, entry] : nodes_) {
    NodeView view;
    view.record = entry.record;
    if (auto placed = placed_on_.find(name); placed != placed_on_.end()) {
      for (JobId id : placed->second) {
        for (const store::TaskPlacementRecord& task : jobs_.at(id).placement) {
          if (task.node == name) view.jobs.emplace_back(id, task.gpus);
        }
      }
    }
    out.push_back(std::move(view));
  }
  return out;
}

// --- team queues ---

Result<std::vector<QueueView>> Controller::ListQueues(const Principal& who) {
  (void)who;
  std::lock_guard lock(mutex_);
  std::vector<QueueView> out;
  const core::QuotaTree* tree = state_.quotas();
  if (tree == nullptr) return out;
  const core::QuotaUsage usage(*tree, state_);
  const core::Time now = Now();
  for (const core::QueueSpec& spec : tree->queues()) {
    QueueView view;
    view.spec = spec;
    view.used = usage.used(spec.name);
    view.fair_share_usage = state_.usage().QueueUsage(spec.name, now);
    for (const auto& [id, job] : jobs_) {
      if (job.request.queue != spec.name) continue;
      if (job.state == JobState::kPending) ++view.pending;
      if (job.state == JobState::kRunning || job.state == JobState::kStarting) ++view.running;
    }
    out.push_back(std::move(view));
  }
  return out;
}

Status Controller::SetQueues(const Principal& who, std::vector<core::QueueSpec> queues) {
  if (!who.admin()) return Status(StatusCode::kPermissionDenied, "only admins change queues");
  BERTH_ASSIGN_OR_RETURN(core::QuotaTree tree, core::QuotaTree::Make(queues));
  std::lock_guard lock(mutex_);
  BERTH_RETURN_IF_ERROR(store_.PutQueues(queues));
  SetQuotasLocked(queues.empty() ? std::nullopt : std::optional(std::move(tree)));
  WakeLocked();
  return Status::Ok();
}

void Controller::SetQuotasLocked(std::optional<core::QuotaTree> tree) {
  queues_admit_by_group_ = tree && AdmitsByGroup(*tree);
  state_.SetQuotas(std::move(tree));
}

}  // namespace berth::server
