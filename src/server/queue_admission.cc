#include "server/queue_admission.h"

#include <fmt/format.h>

#include <algorithm>
#include <span>

#include "core/default_memory.h"

namespace berth::server {
namespace {

bool Lists(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::string Seconds(core::Duration duration) { return fmt::format("{:g}", duration.seconds()); }

std::string Gpus(core::MilliGpu gpus) {
  return fmt::format("{:g}", static_cast<double>(gpus.value()) / 1000.0);
}

Status Denied(std::string message) {
  return Status(StatusCode::kPermissionDenied, std::move(message));
}

// Rule 1 for one queue.
Status CheckAccess(const core::QueueSpec& queue, Submitter& who) {
  if (who.admin() || (queue.allow_users.empty() && queue.allow_groups.empty())) {
    return Status::Ok();
  }
  if (Lists(queue.allow_users, who.user())) return Status::Ok();
  if (!queue.allow_groups.empty()) {
    for (const std::string& group : who.groups()) {
      if (Lists(queue.allow_groups, group)) return Status::Ok();
    }
  }
  std::string lists;
  if (!queue.allow_users.empty()) lists = "allow_users: " + Join(queue.allow_users);
  if (!queue.allow_groups.empty()) {
    lists += (lists.empty() ? "" : "; ") + std::string("allow_groups: ") + Join(queue.allow_groups);
  }
  return Denied("user " + who.user() + " may not submit to queue " + queue.name + " (" + lists +
                ")");
}

// Rules 2-4 for one queue.
Status CheckLimits(const core::QueueSpec& queue, const Submitter& who,
                   const store::JobRequest& request) {
  if (queue.max_priority && !who.admin() && request.priority > *queue.max_priority) {
    return Denied(fmt::format("priority {} is over queue {}'s max_priority {}", request.priority,
                              queue.name, *queue.max_priority));
  }
  if (queue.max_time && request.time_limit && *request.time_limit > *queue.max_time) {
    return Denied(fmt::format("time_limit_s {} is over queue {}'s max_time_s {}",
                              Seconds(*request.time_limit), queue.name, Seconds(*queue.max_time)));
  }
  if (queue.max_time && request.estimate && *request.estimate > *queue.max_time) {
    return Denied(fmt::format("estimate_s {} is over queue {}'s max_time_s {}",
                              Seconds(*request.estimate), queue.name, Seconds(*queue.max_time)));
  }
  const core::MilliGpu gpus = request.total_gpu();
  if (queue.max_gpus_per_user && gpus > *queue.max_gpus_per_user) {
    return Denied(
        fmt::format("{} GPUs is over queue {}'s max_gpus_per_user {}: it could never "
                    "start",
                    Gpus(gpus), queue.name, Gpus(*queue.max_gpus_per_user)));
  }
  return Status::Ok();
}

}  // namespace

bool AdmitsByGroup(const core::QuotaTree& tree) {
  return std::any_of(tree.queues().begin(), tree.queues().end(),
                     [](const core::QueueSpec& queue) { return !queue.allow_groups.empty(); });
}

Status AdmitToQueue(const core::QuotaTree& tree, Submitter& who, store::JobRequest& request) {
  if (request.queue.empty()) {
    const core::QueueSpec* fallback = tree.default_queue();
    if (fallback == nullptr) return Status::Ok();  // the ungoverned default queue
    request.queue = fallback->name;
  }
  const std::optional<size_t> queue = tree.Find(request.queue);
  if (!queue) return InvalidArgument("queue: no queue named '" + request.queue + "'");
  // The smallest max_time on the path, for a job without a limit.
  std::optional<core::Duration> longest;
  for (size_t at : tree.Path(*queue)) {
    const core::QueueSpec& spec = tree.queues()[at];
    if (spec.max_time && (!longest || *spec.max_time < *longest)) longest = spec.max_time;
  }
  if (!request.time_limit) request.time_limit = longest;
  // Memory for a job that asks none, from the nearest queue that sets a
  // default (Slurm's DefMemPerGPU, DefMemPerCPU); its record keeps it.
  // A Slurm job's task is a node holding its Slurm tasks there, a CPU each
  // at least, as Slurm counts them (asked or not: Berth reserves CPUs only
  // when asked).
  // Tasks of their own shapes get memory for their own shape, each. A job
  // whose GPUs come with its nodes (default_memory_per_cpu) is counted as
  // asking none.
  if (request.task.memory.value() == 0) {
    if (const core::DefaultMemory* defaults = core::QueueDefaultMemory(tree, *queue)) {
      auto basis = [&](core::TaskShape shape) {
        if (request.default_memory_per_cpu) shape.gpu = core::MilliGpu(0);
        return shape;
      };
      const std::span<const int32_t> layout = request.slurm_tasks_per_node;
      request.task.memory = core::DefaultTaskMemory(*defaults, basis(request.task),
                                                    core::LeastCpusOfSlurmNode(layout));
      for (size_t task = 0; task < request.task_shapes.size(); ++task) {
        core::TaskShape& shape = request.task_shapes[task];
        const auto on_node = layout.empty() ? layout : layout.subspan(task, 1);
        shape.memory =
            core::DefaultTaskMemory(*defaults, basis(shape), core::LeastCpusOfSlurmNode(on_node));
      }
      if (!request.task_shapes.empty()) request.task = core::LargestShape(request.task_shapes);
      // A Slurm job's scripts read the per-CPU default, as Slurm's do.
      const std::optional<core::MemoryMiB> per_cpu =
          core::PerCpuDefaultFor(*defaults, basis(request.task));
      if (per_cpu && !request.slurm_tasks_per_node.empty()) {
        request.env.emplace("SLURM_MEM_PER_CPU", std::to_string(per_cpu->value()));
      }
    }
  }
  for (size_t at : tree.Path(*queue)) {
    const core::QueueSpec& spec = tree.queues()[at];
    BERTH_RETURN_IF_ERROR(CheckAccess(spec, who));
    BERTH_RETURN_IF_ERROR(CheckLimits(spec, who, request));
  }
  return Status::Ok();
}

}  // namespace berth::server
