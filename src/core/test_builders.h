// Fluent builders for core tests: scenarios read as tables of nodes and jobs.
// Test-only; not part of the library.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/cluster_state.h"
#include "core/decide.h"
#include "core/job.h"
#include "core/node.h"
#include "core/placer.h"
#include "core/policy.h"
#include "core/runtime_estimator.h"

namespace berth::core::testing {

inline Time At(int64_t seconds) { return Time::FromSeconds(seconds); }
inline Duration Secs(int64_t seconds) { return Duration::Seconds(seconds); }
inline JobId Id(int64_t id) { return static_cast<JobId>(id); }
inline NodeId N(int32_t id) { return static_cast<NodeId>(id); }

class JobBuilder {
 public:
  explicit JobBuilder(int64_t id) {
    spec_.id = static_cast<JobId>(id);
    spec_.task.gpu = WholeGpus(1);
    spec_.user = "user";
    spec_.queue = "default";
  }
  JobBuilder& Gpus(int gpus) {
    spec_.task.gpu = WholeGpus(gpus);
    return *this;
  }
  JobBuilder& GpuMilli(int64_t milli) {
    spec_.task.gpu = MilliGpu(milli);
    return *this;
  }
  JobBuilder& Tasks(int tasks) {
    spec_.tasks = tasks;
    return *this;
  }
  JobBuilder& Cpu(int64_t millicores) {
    spec_.task.cpu = MilliCpu(millicores);
    return *this;
  }
  JobBuilder& Memory(int64_t mib) {
    spec_.task.memory = MemoryMiB(mib);
    return *this;
  }
  JobBuilder& Submit(int64_t seconds) {
    spec_.submit_time = At(seconds);
    return *this;
  }
  JobBuilder& Limit(int64_t seconds) {
    spec_.time_limit = Secs(seconds);
    return *this;
  }
  JobBuilder& Estimate(int64_t seconds) {
    spec_.estimate = Secs(seconds);
    return *this;
  }
  JobBuilder& Queue(std::string queue) {
    spec_.queue = std::move(queue);
    return *this;
  }
  JobBuilder& Name(std::string name) {
    spec_.name = std::move(name);
    return *this;
  }
  JobBuilder& User(std::string user) {
    spec_.user = std::move(user);
    return *this;
  }
  JobBuilder& Priority(int32_t priority) {
    spec_.priority = priority;
    return *this;
  }
  JobBuilder& CheckpointEvery(int64_t seconds) {
    spec_.checkpoint_interval = Duration::Seconds(seconds);
    return *this;
  }
  JobBuilder& SavesWhenStopped() {
    spec_.saves_when_stopped = true;
    return *this;
  }
  JobBuilder& Preemptible() {
    spec_.preemptible = true;
    return *this;
  }
  JobBuilder& Type(std::string type) {
    spec_.gpu_types = {std::move(type)};
    return *this;
  }
  JobBuilder& Types(std::vector<std::string> types) {
    spec_.gpu_types = std::move(types);
    return *this;
  }
  JobBuilder& Constraint(std::string features) {
    Constraints().features = std::move(features);
    return *this;
  }
  JobBuilder& NodeList(std::vector<std::string> nodes) {
    Constraints().nodelist = std::move(nodes);
    return *this;
  }
  JobBuilder& Exclude(std::vector<std::string> nodes) {
    Constraints().exclude = std::move(nodes);
    return *this;
  }
  JobBuilder& InContainer() {
    Constraints().container = true;
    return *this;
  }
  JobBuilder& InArray(int64_t array, int32_t max_running) {
    spec_.array_limit = ArrayLimit{JobId(array), max_running};
    return *this;
  }
  JobBuilder& OneGroup() {
    spec_.gpu_locality = GpuLocality::kOneGroup;
    return *this;
  }
  JobBuilder& DistinctNodes() {
    spec_.node_spread = NodeSpread::kDistinctNodes;
    return *this;
  }
  // A gang on distinct nodes whose tasks have these whole GPUs each.
  JobBuilder& GpusPerTask(const std::vector<int>& gpus) {
    std::vector<TaskShape> shapes;
    for (int count : gpus)
      shapes.push_back(TaskShape{WholeGpus(count), spec_.task.cpu, spec_.task.memory});
    spec_.tasks = static_cast<int32_t>(shapes.size());
    spec_.task = LargestShape(shapes);
    spec_.task_shapes = std::make_shared<const std::vector<TaskShape>>(std::move(shapes));
    return DistinctNodes();
  }
  operator JobSpec() const { return spec_; }  // NOLINT: builder
  const JobSpec& spec() const { return spec_; }

 private:
  // A fresh copy of the spec's constraints to change (specs share theirs).
  NodeConstraints& Constraints() {
    auto copy = std::make_shared<NodeConstraints>(spec_.constraints ? *spec_.constraints
                                                                    : NodeConstraints{});
    NodeConstraints& constraints = *copy;
    spec_.constraints = std::move(copy);
    return constraints;
  }

  JobSpec spec_;
};

inline JobBuilder NewJob(int64_t id) { return JobBuilder(id); }

// Adds `count` nodes named prefix0.. of `gpus` GPUs of `type`.
inline void AddNodes(ClusterState& state, int count, int gpus, const std::string& type = "V100",
                     const std::string& prefix = "n") {
  for (int i = 0; i < count; ++i) {
    const std::string name = prefix + std::to_string(state.nodes().size());
    state.AddNode(MakeNodeSpec(name, type, gpus, Cores(64), MemoryMiB(512 * 1024)));
  }
}

// Occupies `gpus` GPUs, `cpu` millicores and `memory` MiB on `node` with a
// throwaway running job.
inline void Occupy(ClusterState& state, int64_t id, NodeId node, int gpus, int64_t cpu = 0,
                   int64_t memory = 0) {
  JobSpec spec = NewJob(id).Gpus(gpus).Cpu(cpu).Memory(memory);
  if (gpus == 0) spec.task.gpu = MilliGpu(0);
  state.Submit(spec, At(0));
  Placement placement;
  placement.shape = spec.task;
  GpuMask free = state.capacity().free_gpus(node);
  GpuMask take = 0;
  for (int i = 0; i < gpus; ++i) {
    const GpuMask bit = free & (~free + 1);
    take |= bit;
    free &= ~bit;
  }
  placement.tasks.push_back(TaskPlacement{node, take});
  state.Start(spec.id, placement, At(0));
}

inline void Submit(ClusterState& state, const JobSpec& spec) {
  state.Submit(spec, spec.submit_time);
}

// Known durations by job id, for tests of oracle policies and ETAs.
class TableEstimator final : public RuntimeEstimator {
 public:
  explicit TableEstimator(std::map<JobId, Duration> durations, Duration fallback = Secs(3600))
      : durations_(std::move(durations)), fallback_(fallback) {}
  Duration Expected(const Job& job) const override {
    auto it = durations_.find(job.spec.id);
    return it == durations_.end() ? fallback_ : it->second;
  }

 private:
  std::map<JobId, Duration> durations_;
  Duration fallback_;
};

inline Policy NamedPolicy(std::string_view name,
                          std::shared_ptr<const RuntimeEstimator> runtimes = nullptr) {
  // The reference behaviours (oracles, preempting any job) the tests model.
  Result<Policy> policy = MakePolicy(name, InSimulation());
  Policy out = std::move(policy).value();
  if (runtimes) out.runtimes = std::move(runtimes);
  return out;
}

// Applies a decision the way the simulator does: preemptions, then starts.
inline void Apply(ClusterState& state, const Decision& decision, Time now) {
  for (const Preemption& p : decision.preemptions) state.Preempt(p.job, now);
  for (const JobStart& start : decision.starts) state.Start(start, now);
}

inline std::vector<JobId> StartedIds(const Decision& decision) {
  std::vector<JobId> ids;
  for (const JobStart& start : decision.starts) ids.push_back(start.job);
  return ids;
}

inline const PendingJob* FindPending(const Decision& decision, JobId id) {
  for (const PendingJob& pending : decision.pending) {
    if (pending.job == id) return &pending;
  }
  return nullptr;
}

}  // namespace berth::core::testing
