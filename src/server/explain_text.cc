#include "server/explain_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "common/eta_text.h"
#include "common/time_format.h"

namespace berth::server {
namespace {

std::string JobRef(core::JobId id) { return "job " + std::to_string(core::Value(id)); }

// "2 tasks x 4 H100 GPUs", "1 GPU", "half a GPU"...
std::string Ask(const store::JobRecord& job) {
  const store::JobRequest& request = job.request;
  const double gpus = static_cast<double>(request.task.gpu.value()) / 1000.0;
  const std::string models = store::JoinModels(request.gpu_types);
  const std::string kind = models.empty() ? "" : models + " ";
  std::string per_task = gpus == 0   ? "no GPU"
                         : gpus == 1 ? "1 " + kind + "GPU"
                                     : fmt::format("{:g} {}GPUs", gpus, kind);
  if (request.tasks == 1) return per_task;
  return fmt::format("{} tasks x {}", request.tasks, per_task);
}

// "1 has" / "3 have": a count of nodes with its verb.
std::string Nodes(int64_t count, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", count, count == 1 ? one : many);
}

std::string Cores(core::MilliCpu cpu) {
  return fmt::format("{:g}", static_cast<double>(cpu.value()) / 1000.0);
}

// Why `count` nodes were rejected by `rejection`, as a phrase.
std::string Rejected(core::NodeRejection rejection, int64_t count, const core::NodeTally& tally,
                     const store::JobRequest& request, When when) {
  const bool now = when == When::kNow;
  const std::string free = now ? "free " : "";
  switch (rejection) {
    case core::NodeRejection::kDown:
      return Nodes(count, "is down", "are down");
    case core::NodeRejection::kDraining:
      return Nodes(count, "is draining", "are draining");
    case core::NodeRejection::kGpuModel: {
      std::string models;
      for (const auto& [model, nodes] : tally.other_models) {
        models += (models.empty() ? "" : ", ") + (model.empty() ? "no GPUs" : model);
        if (tally.other_models.size() > 1) models += fmt::format(" x{}", nodes);
      }
      return Nodes(count, "has ", "have ") + models +
             " (asked: " + store::JoinModels(request.gpu_types) + ")";
    }
    case core::NodeRejection::kNodeList:
      return Nodes(count, "is not in its nodelist", "are not in its nodelist");
    case core::NodeRejection::kExcluded:
      return Nodes(count, "is excluded", "are excluded");
    case core::NodeRejection::kFeatures:
      return Nodes(count, "does not match", "do not match") + " its constraint '" +
             request.constraint + "'";
    case core::NodeRejection::kContainerRuntime:
      return Nodes(count, "has", "have") + " no container runtime (for its image)";
    case core::NodeRejection::kGpus:
      if (request.task.gpu.value() < 1000) {
        return Nodes(count, "has", "have") + " no GPU with " + free +
               fmt::format("room for {} thousandths", request.task.gpu.value());
      }
      return Nodes(count, "has", "have") +
             fmt::format(" fewer than {} {}GPUs", request.task.gpu.value() / 1000, free);
    case core::NodeRejection::kCpu:
      return Nodes(count, "has", "have") + " fewer than " + Cores(request.task.cpu) + " " + free +
             "CPUs";
    case core::NodeRejection::kMemory:
      return Nodes(count, "has", "have") +
             fmt::format(" less than {} MiB of {}memory", request.task.memory.value(), free);
    case core::NodeRejection::kInterconnect:
      return Nodes(count, "has", "have") + fmt::format(" no interconnect group with {} {}GPUs",
                                                       request.task.gpu.value() / 1000, free);
  }
  return Nodes(count, "is", "are") + " " + std::string(core::NodeRejectionName(rejection));
}

// The rejections with a count, most first (ties in the pipeline's order).
std::vector<std::pair<core::NodeRejection, int64_t>> ByCount(const core::NodeTally& tally) {
  std::vector<std::pair<core::NodeRejection, int64_t>> out;
  for (size_t r = 0; r < core::kNodeRejectionCount; ++r) {
    if (tally.rejected[r] > 0)
      out.emplace_back(static_cast<core::NodeRejection>(r), tally.rejected[r]);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

std::string QueueName(const std::string& queue) { return queue.empty() ? "default" : queue; }

// "user limit: 8 GPUs running of 8 allowed in queue vision".
std::string UserLimit(const core::PendingJob& pending, const store::JobRecord& job,
                      const core::QuotaTree* queues) {
  if (!pending.user_limit) return "user limit: its user is at a per-user limit of its queue";
  const core::UserLimitHit& hit = *pending.user_limit;
  // A tree replaced since the cycle may not have the index: the job's own
  // queue is the likeliest (the next cycle says again).
  const std::string queue = queues != nullptr && hit.queue < queues->queues().size()
                                ? queues->queues()[hit.queue].name
                                : QueueName(job.request.queue);
  if (hit.kind == core::UserLimitKind::kRunningJobs) {
    return fmt::format("user limit: {} {} running of {} allowed in queue {}", hit.running,
                       hit.running == 1 ? "job" : "jobs", hit.allowed, queue);
  }
  const double running = static_cast<double>(hit.running) / 1000.0;
  return fmt::format("user limit: {:g} {} running of {:g} allowed in queue {}", running,
                     running == 1 ? "GPU" : "GPUs", static_cast<double>(hit.allowed) / 1000.0,
                     queue);
}

std::string What(const core::PendingJob& pending, const store::JobRecord& job,
                 const core::QuotaTree* queues) {
  switch (pending.reason) {
    case core::ReasonCode::kHeld:
      return "held: it starts only once released or once its dependencies are met";
    case core::ReasonCode::kPriority:
      return pending.blocker ? "waiting behind " + JobRef(*pending.blocker) +
                                   ", which is ahead in the queue and needs the GPUs first"
                             : "waiting behind jobs ahead in the queue";
    case core::ReasonCode::kResources:
      return "waiting for " + Ask(job) + " to free up";
    case core::ReasonCode::kFragmentation:
      return "enough GPUs are free in total, but not on few enough nodes for " + Ask(job);
    case core::ReasonCode::kNodesUnavailable:
      return "every node that could run it (" + Ask(job) + ") is down, draining or unhealthy";
    case core::ReasonCode::kReserved:
      return "next to start: " + Ask(job) + " are reserved for it as running jobs end";
    case core::ReasonCode::kReservation:
      return pending.blocker ? "could start now only by delaying " + JobRef(*pending.blocker) +
                                   ", which holds a reservation"
                             : "could start now only by delaying a reserved job";
    case core::ReasonCode::kQuota:
      return "its queue '" + QueueName(job.request.queue) + "' (or a parent) is at its GPU ceiling";
    case core::ReasonCode::kUserLimit:
      return UserLimit(pending, job, queues);
    case core::ReasonCode::kArrayLimit:
      return job.request.array_max_running
                 ? "its array already has " + std::to_string(*job.request.array_max_running) +
                       " elements running, as many as its %" +
                       std::to_string(*job.request.array_max_running) + " allows"
                 : "its array has as many elements running as it allows";
    case core::ReasonCode::kInfeasible:
      return "can never start on this cluster as it is: no node (or set of nodes) could ever "
             "host " +
             Ask(job);
  }
  return std::string(core::ReasonName(pending.reason));
}

}  // namespace

std::string DescribeNodes(const core::NodeTally& tally, const store::JobRequest& request,
                          When when) {
  std::string text = fmt::format("{} of {} nodes {}", tally.fit, tally.nodes,
                                 when == When::kNow ? "can start it now" : "could ever host it");
  std::string reasons;
  for (const auto& [rejection, count] : ByCount(tally)) {
    reasons += (reasons.empty() ? "" : ", ") + Rejected(rejection, count, tally, request, when);
  }
  if (!reasons.empty()) text += ": " + reasons;
  if (request.distinct_nodes && tally.fit > 0 && tally.tasks < request.tasks) {
    // One task per node: the nodes that fit are the tasks that fit.
    text += fmt::format("; it asks for {} distinct nodes, one task on each", request.tasks);
  } else if (tally.fit > 0 && tally.tasks < request.tasks) {
    text +=
        fmt::format("; the nodes of one GPU model {} {} of its {} tasks at once",
                    when == When::kNow ? "can start" : "could host", tally.tasks, request.tasks);
  }
  return text;
}

std::string DescribeNeverFits(const core::NodeTally& tally, const store::JobRequest& request) {
  const std::string nodes = DescribeNodes(tally, request, When::kEver);
  const std::string wait =
      "; or set wait_for_nodes (berth submit --wait-for-nodes) to queue it "
      "for nodes not yet registered";
  if (tally.constraint_error) return *tally.constraint_error;
  // The filter that rules out the most nodes names the field to change;
  // when every node passes them all, the gang is larger than the cluster.
  const std::vector<std::pair<core::NodeRejection, int64_t>> counts = ByCount(tally);
  if (request.distinct_nodes && (counts.empty() || tally.fit > 0)) {
    return fmt::format("distinct_nodes: {} tasks on distinct nodes, but {}", request.tasks, nodes) +
           wait;
  }
  if (counts.empty() || tally.fit > 0) {
    return fmt::format("tasks: {} tasks of this shape, but {}", request.tasks, nodes) + wait;
  }
  const auto [rejection, count] = counts.front();
  const int64_t gpus = request.task.gpu.value() / 1000;
  switch (rejection) {
    case core::NodeRejection::kGpuModel:
      return "gpu_type: " + nodes + wait;
    case core::NodeRejection::kNodeList:
      return "nodelist: " + nodes + wait;
    case core::NodeRejection::kExcluded:
      return "exclude: " + nodes + wait;
    case core::NodeRejection::kFeatures:
      return "constraint: " + nodes + wait;
    case core::NodeRejection::kContainerRuntime:
      return "container: " + nodes + wait;
    case core::NodeRejection::kGpus:
      if (gpus == 0) return "gpu_milli: " + nodes + wait;
      if (tally.largest_gpus == 0) {
        return fmt::format("gpus: {} per task, but no node that could run it has GPUs ({})", gpus,
                           nodes) +
               wait;
      }
      {
        const int64_t total = gpus * request.tasks;
        const int64_t per_task = tally.largest_gpus;
        const int64_t tasks = (total + per_task - 1) / per_task;
        return fmt::format(
                   "gpus: {} per task, but the largest node has {}; ask --nodes {} --gpus {} ({})",
                   gpus, tally.largest_gpus, tasks, per_task, nodes) +
               wait;
      }
    case core::NodeRejection::kCpu:
      return "cpus: " + Cores(request.task.cpu) + " per task, but the largest node has " +
             Cores(tally.largest_cpu) + " (" + nodes + ")" + wait;
    case core::NodeRejection::kMemory:
      return fmt::format("memory_mib: {} per task, but the largest node has {} ({})",
                         request.task.memory.value(), tally.largest_memory.value(), nodes) +
             wait;
    case core::NodeRejection::kInterconnect:
      return "gpus_in_one_group: " + nodes + wait;
    case core::NodeRejection::kDown:
    case core::NodeRejection::kDraining:
      break;  // not counted as if every node were up
  }
  return nodes + wait;
}

std::string DescribePending(const core::PendingJob& pending, const store::JobRecord& job,
                            core::Time now, const core::NodeTally* nodes,
                            const core::QuotaTree* queues) {
  std::string text = What(pending, job, queues);
  if (nodes != nullptr) {
    const When when = pending.reason == core::ReasonCode::kInfeasible ? When::kEver : When::kNow;
    text += "; " + DescribeNodes(*nodes, job.request, when);
  }
  if (pending.reason != core::ReasonCode::kHeld &&
      pending.reason != core::ReasonCode::kInfeasible) {
    text += fmt::format("; position {} in the queue", pending.position + 1);
  }
  if (pending.eta) {
    const std::optional<core::EtaInterval>& interval = pending.eta_interval;
    text += "; " + EtaText(*pending.eta, interval ? std::optional(interval->low) : std::nullopt,
                           interval ? std::optional(interval->high) : std::nullopt, now,
                           ClockZone::kUtc, "UTC");
    if (pending.after_job) text += " (when " + JobRef(*pending.after_job) + " ends)";
  }
  return text;
}

}  // namespace berth::server
