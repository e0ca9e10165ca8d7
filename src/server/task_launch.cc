#include "server/task_launch.h"

#include <algorithm>

namespace berth::server {
namespace {

// SLURM_CLUSTER_NAME: Berth has one cluster per server.
constexpr char kSlurmClusterName[] = "berth";
// SLURM_JOB_PARTITION of a job in the default queue (as squeue shows it).
constexpr char kDefaultPartition[] = "default";

// A Slurm job's nodes (distinct, in task order: task 0's first) and layout.
protocol::SlurmAllocation SlurmAllocationOf(const store::JobRecord& job) {
  protocol::SlurmAllocation slurm;
  for (const store::TaskPlacementRecord& task : job.placement) {
    if (std::find(slurm.nodes.begin(), slurm.nodes.end(), task.node) == slurm.nodes.end()) {
      slurm.nodes.push_back(task.node);
    }
  }
  if (slurm.nodes.size() < job.placement.size()) {
    // Tasks that share nodes (srun outside a job): each is a Slurm task.
    for (const std::string& node : slurm.nodes) {
      slurm.tasks_per_node.push_back(static_cast<int32_t>(std::count_if(
          job.placement.begin(), job.placement.end(),
          [&](const store::TaskPlacementRecord& task) { return task.node == node; })));
    }
  } else {
    slurm.tasks_per_node = job.request.slurm_tasks_per_node;
    slurm.tasks_per_node.resize(slurm.nodes.size(), 1);
  }
  // Shares that differ: each node's CPUs, a CPU per Slurm task at least.
  if (job.request.task_shapes.size() == slurm.nodes.size()) {
    for (size_t node = 0; node < slurm.nodes.size(); ++node) {
      const int64_t asked = (job.request.task_shapes[node].cpu.value() + 999) / 1000;
      slurm.cpus_per_node.push_back(
          static_cast<int32_t>(std::max<int64_t>(asked, slurm.tasks_per_node[node])));
    }
  }
  slurm.partition = job.request.queue.empty() ? kDefaultPartition : job.request.queue;
  slurm.cluster = kSlurmClusterName;
  return slurm;
}

}  // namespace

protocol::TaskLaunch TaskLaunchFor(const store::JobRecord& job, int32_t task) {
  const store::JobRequest& request = job.request;
  protocol::TaskLaunch launch;
  launch.name = request.name;
  launch.command = request.command;
  launch.script = request.script;
  launch.env = request.env;
  launch.workdir = request.workdir;
  launch.output = request.output;
  launch.error = request.error;
  launch.append_output = request.append_output;
  if (job.array_parent) launch.array_job = core::Value(*job.array_parent);
  launch.array_index = request.array_index;
  launch.time_limit = request.time_limit;
  launch.grace = request.grace;
  if (request.signal) {
    launch.signal = protocol::EarlySignal{request.signal->name, request.signal->before,
                                          request.signal->batch_only};
  }
  launch.run_as.user = job.user;
  const core::TaskShape& shape = request.ShapeOf(static_cast<size_t>(task));
  launch.limits.cpu = shape.cpu;
  launch.limits.memory = shape.memory;
  if (request.container) {
    const store::ContainerRequest& wanted = *request.container;
    protocol::Container& container = launch.container.emplace();
    container.image = wanted.image;
    for (const store::ContainerMount& mount : wanted.mounts) {
      container.mounts.push_back({mount.source, mount.target, mount.read_only});
    }
    container.workdir = wanted.workdir;
    container.env = wanted.env;
    container.entrypoint = wanted.entrypoint;
    if (!wanted.pull.empty()) container.pull = protocol::ParseImagePull(wanted.pull);
  }
  if (!request.slurm_tasks_per_node.empty()) launch.slurm = SlurmAllocationOf(job);
  return launch;
}

void HoldShareInstead(protocol::TaskLaunch& launch) {
  launch.command = {"sleep", "infinity"};
  launch.script.clear();
  launch.output.clear();
  launch.error.clear();
  launch.append_output = false;
}

}  // namespace berth::server
