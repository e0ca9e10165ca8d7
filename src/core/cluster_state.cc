#include "core/cluster_state.h"

#include <algorithm>
#include <utility>

#include "common/check.h"

namespace berth::core {

ClusterState::ClusterState(ClusterOptions options)
    : capacity_(&nodes_), usage_(options.usage_half_life) {}

NodeId ClusterState::AddNode(NodeSpec spec) {
  const NodeId id = nodes_.Add(std::move(spec));
  node_states_.push_back(NodeState::kUp);
  capacity_.SyncNodes();
  return id;
}

void ClusterState::SetNodeState(NodeId node, NodeState state) {
  node_states_[Index(node)] = state;
  capacity_.SetNodeState(node, state);
}

void ClusterState::SetNodeAttributes(NodeId node, std::map<std::string, std::string> labels,
                                     std::set<std::string, std::less<>> features,
                                     std::string container_runtime) {
  NodeSpec& spec = nodes_.mutable_spec(node);
  spec.labels = std::move(labels);
  spec.features = std::move(features);
  spec.container_runtime = std::move(container_runtime);
}

void ClusterState::SetGpuHealth(NodeId node, int gpu, GpuHealth health) {
  NodeSpec& spec = nodes_.mutable_spec(node);
  BERTH_CHECK(gpu >= 0 && static_cast<size_t>(gpu) < spec.gpus.size()) << gpu;
  spec.gpus[static_cast<size_t>(gpu)].health = health;
  capacity_.SetGpuUsable(node, gpu, health == GpuHealth::kHealthy);
}

namespace {

ClusterState::PendingWait WaitOf(const Job& job) {
  return {job.spec.submit_time + job.executed, job.spec.id, job.spec.submit_time,
          job.spec.total_gpu().value()};
}

// Where `id` is, or goes, in run_starts().
std::vector<ClusterState::RunStart>::iterator RunStartOf(std::vector<ClusterState::RunStart>& runs,
                                                         JobId id) {
  return std::lower_bound(
      runs.begin(), runs.end(), id,
      [](const ClusterState::RunStart& run, JobId wanted) { return run.id < wanted; });
}

}  // namespace

void ClusterState::Submit(JobSpec spec, Time now, EarlierRuns earlier) {
  BERTH_CHECK(spec.tasks >= 1) << "job " << Value(spec.id) << " tasks " << spec.tasks;
  BERTH_CHECK(spec.task.valid()) << "job " << Value(spec.id) << " has an invalid task shape";
  if (spec.task_shapes) {
    const std::vector<TaskShape>& shapes = *spec.task_shapes;
    BERTH_CHECK(
        shapes.size() == static_cast<size_t>(spec.tasks) &&
        spec.node_spread == NodeSpread::kDistinctNodes && spec.task == LargestShape(shapes) &&
        std::all_of(shapes.begin(), shapes.end(),
                    [](const TaskShape& shape) { return shape.valid() && !shape.wants_share(); }))
        << "job " << Value(spec.id) << " has invalid task shapes";
  }
  const JobId id = spec.id;
  Job job;
  job.spec = std::move(spec);
  job.state = JobState::kPending;
  job.queued_since = now;
  job.executed = earlier.executed;
  job.preemptions = earlier.preemptions;
  auto [it, inserted] = jobs_.emplace(id, std::move(job));
  BERTH_CHECK(inserted) << "duplicate job id " << Value(id);
  AddPending(it->second);
  CountWaiting(it->second.spec, +1);
}

void ClusterState::AddPending(Job& job) {
  pending_.Insert(job.spec.id, &job);
  const PendingWait wait = WaitOf(job);
  pending_by_wait_.insert(wait);
  pending_milli_gpus_ += wait.milli_gpus;
}

void ClusterState::RemovePending(Job& job) {
  pending_.Erase(job.spec.id);
  const PendingWait wait = WaitOf(job);
  BERTH_CHECK(pending_by_wait_.erase(wait) == 1) << "job " << Value(job.spec.id) << " not waiting";
  pending_milli_gpus_ -= wait.milli_gpus;
}

void ClusterState::CountWaiting(const JobSpec& spec, int64_t delta) {
  for (auto [counts, key] :
       {std::pair{&waiting_users_, &spec.user}, std::pair{&waiting_queues_, &spec.queue}}) {
    auto it = counts->try_emplace(*key, 0).first;
    it->second += delta;
    if (it->second == 0) counts->erase(it);
  }
  for (size_t rank = 0; rank < (spec.task_shapes ? spec.task_shapes->size() : 1); ++rank) {
    auto shape =
        waiting_shapes_.try_emplace(WaitingShape{spec.ShapeOf(rank), spec.gpu_types}, 0).first;
    shape->second += delta * (spec.task_shapes ? 1 : spec.tasks);
    if (shape->second == 0) waiting_shapes_.erase(shape);
  }
}

void ClusterState::Hold(JobId id) {
  Job& job = GetMutable(id);
  BERTH_CHECK(job.state == JobState::kPending) << "hold of job " << Value(id);
  job.state = JobState::kHeld;
  RemovePending(job);
  held_.Insert(id, &job);
}

void ClusterState::Release(JobId id) {
  Job& job = GetMutable(id);
  BERTH_CHECK(job.state == JobState::kHeld) << "release of job " << Value(id);
  job.state = JobState::kPending;
  held_.Erase(id);
  AddPending(job);
}

void ClusterState::Start(JobId id, Placement placement, Time now) {
  Start(JobStart{id, std::move(placement), {}, false, std::nullopt}, now);
}

void ClusterState::Start(const JobStart& start, Time now) {
  const JobId id = start.job;
  const Placement& placement = start.placement;
  Job& job = GetMutable(id);
  BERTH_CHECK(job.state == JobState::kPending)
      << "start of job " << Value(id) << " in state " << JobStateName(job.state);
  BERTH_CHECK(placement.tasks.size() == static_cast<size_t>(job.spec.tasks) &&
              placement.shape == job.spec.task &&
              (placement.task_shapes == nullptr) == (job.spec.task_shapes == nullptr) &&
              (!placement.task_shapes || *placement.task_shapes == *job.spec.task_shapes))
      << "placement does not match job " << Value(id);
  BERTH_CHECK(capacity_.CanAllocate(placement))
      << "placement of job " << Value(id) << " does not fit";
  capacity_.Allocate(placement);
  usage_.BeginRun(job.spec.user, job.spec.queue, job.spec.total_gpu(), now);
  job.placement = placement;
  job.state = JobState::kRunning;
  job.started = now;
  job.guaranteed = start.guaranteed;
  RemovePending(job);
  running_.Insert(id, &job);
  if (job.spec.preemptible) running_preemptible_.Insert(id, &job);
  if (job.spec.array_limit) ++running_array_elements_[job.spec.array_limit->array];
  std::optional<Time> expected_end;
  if (start.expected_remaining) expected_end = now + *start.expected_remaining;
  run_starts_.insert(RunStartOf(run_starts_, id), RunStart{id, now, expected_end});
  CountWaiting(job.spec, -1);
}

void ClusterState::EndRun(Job& job, Time now) {
  usage_.EndRun(job.spec.user, job.spec.queue, job.spec.total_gpu(), job.started, now);
  capacity_.Release(job.placement);
  job.executed += now - job.started;
  job.placement = Placement{};
  job.last_checkpoint.reset();
  job.checkpoint_period.reset();
  job.guaranteed = false;
  running_.Erase(job.spec.id);
  if (job.spec.preemptible) running_preemptible_.Erase(job.spec.id);
  if (job.spec.array_limit) {
    auto elements = running_array_elements_.find(job.spec.array_limit->array);
    BERTH_CHECK(elements != running_array_elements_.end() && elements->second > 0);
    if (--elements->second == 0) running_array_elements_.erase(elements);
  }
  run_starts_.erase(RunStartOf(run_starts_, job.spec.id));
}

void ClusterState::Finish(JobId id, Time now) {
  Job& job = GetMutable(id);
  BERTH_CHECK(job.running()) << "finish of job " << Value(id) << " that is not running";
  EndRun(job, now);
  jobs_.erase(id);
}

void ClusterState::Preempt(JobId id, Time now) {
  Requeue(id, now);
  ++GetMutable(id).preemptions;
}

void ClusterState::Requeue(JobId id, Time now) {
  Job& job = GetMutable(id);
  BERTH_CHECK(job.running()) << "requeue of job " << Value(id) << " that is not running";
  EndRun(job, now);
  job.state = JobState::kPending;
  job.queued_since = now;
  AddPending(job);
  CountWaiting(job.spec, +1);
}

void ClusterState::MarkStopping(JobId id) {
  Job& job = GetMutable(id);
  BERTH_CHECK(job.running()) << "stop of job " << Value(id) << " that is not running";
  job.state = JobState::kCompleting;
}

void ClusterState::Amend(JobSpec spec) {
  Job& job = GetMutable(spec.id);
  BERTH_CHECK(job.state == JobState::kPending || job.state == JobState::kHeld)
      << "job " << Value(spec.id) << " amended while not waiting";
  const bool pending = job.state == JobState::kPending;
  if (pending) RemovePending(job);
  CountWaiting(job.spec, -1);
  job.spec = std::move(spec);
  job.estimator_memo = EstimatorMemo{};  // it may describe the old spec
  CountWaiting(job.spec, +1);
  if (pending) AddPending(job);
}

void ClusterState::Cancel(JobId id, Time now) {
  Job& job = GetMutable(id);
  if (job.running()) {
    EndRun(job, now);
  } else {
    if (job.state == JobState::kHeld) {
      held_.Erase(id);
    } else {
      RemovePending(job);
    }
    CountWaiting(job.spec, -1);
  }
  jobs_.erase(id);
}

void ClusterState::ReportCheckpoint(JobId id, Time at) {
  Job& job = GetMutable(id);
  BERTH_CHECK(job.running()) << "checkpoint of job " << Value(id) << " that is not running";
  if (job.last_checkpoint && at > *job.last_checkpoint) {
    job.checkpoint_period = at - *job.last_checkpoint;
  }
  job.last_checkpoint = at;
}

const Job* ClusterState::Find(JobId id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

const Job& ClusterState::Get(JobId id) const {
  const Job* job = Find(id);
  BERTH_CHECK(job != nullptr) << "unknown job " << Value(id);
  return *job;
}

Job& ClusterState::GetMutable(JobId id) {
  auto it = jobs_.find(id);
  BERTH_CHECK(it != jobs_.end()) << "unknown job " << Value(id);
  return it->second;
}

}  // namespace berth::core
