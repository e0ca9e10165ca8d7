#include "server/explain_text.h"

#include <fmt/format.h>

#include "common/time_format.h"

namespace berth::server {
namespace {

std::string JobRef(core::JobId id) { return "job " + std::to_string(core::Value(id)); }

// "2 tasks x 4 H100 GPUs", "1 GPU", "half a GPU"...
std::string Ask(const store::JobRecord& job) {
  const store::JobRequest& request = job.request;
  const double gpus = static_cast<double>(request.task.gpu.value()) / 1000.0;
  const std::string kind = request.gpu_type.empty() ? "" : request.gpu_type + " ";
  std::string per_task = gpus == 0   ? "no GPU"
                         : gpus == 1 ? "1 " + kind + "GPU"
                                     : fmt::format("{:g} {}GPUs", gpus, kind);
  if (request.tasks == 1) return per_task;
  return fmt::format("{} tasks x {}", request.tasks, per_task);
}

std::string What(const core::PendingJob& pending, const store::JobRecord& job) {
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
      return "its queue '" + (job.request.queue.empty() ? "default" : job.request.queue) +
             "' (or a parent) is at its GPU ceiling";
    case core::ReasonCode::kInfeasible:
      return "can never start on this cluster as it is: no node (or set of nodes) has " + Ask(job) +
             " with the CPUs and memory asked for";
  }
  return std::string(core::ReasonName(pending.reason));
}

}  // namespace

std::string DescribePending(const core::PendingJob& pending, const store::JobRecord& job) {
  std::string text = What(pending, job);
  if (pending.reason != core::ReasonCode::kHeld &&
      pending.reason != core::ReasonCode::kInfeasible) {
    text += fmt::format("; position {} in the queue", pending.position + 1);
  }
  if (pending.eta) {
    text += "; expected to start around " + FormatRfc3339(*pending.eta);
    if (pending.after_job) text += " (when " + JobRef(*pending.after_job) + " ends)";
  }
  return text;
}

}  // namespace berth::server
