#include "agent/reconcile.h"

#include <algorithm>
#include <map>
#include <set>

namespace berth::agent {
namespace {

TaskKey KeyOf(const protocol::TaskAssignment& task) {
  return TaskKey{task.job, task.task, task.attempt};
}

bool Overlap(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  for (int32_t x : a) {
    if (std::find(b.begin(), b.end(), x) != b.end()) return true;
  }
  return false;
}

}  // namespace

ReconcilePlan Reconcile(const protocol::DesiredState& desired,
                        const std::vector<LocalTask>& local) {
  ReconcilePlan plan;
  std::map<TaskKey, const LocalTask*> by_key;
  for (const LocalTask& task : local) by_key[task.key] = &task;
  std::set<TaskKey> wanted;
  for (const protocol::TaskAssignment& task : desired.run) wanted.insert(KeyOf(task));

  // Stops first: their decisions decide which starts must wait.
  std::map<TaskKey, core::Duration> stops;  // the shortest grace asked for, per task
  for (const protocol::TaskStop& stop : desired.stop) {
    const TaskKey key{stop.job, stop.task, stop.attempt};
    auto it = stops.find(key);
    if (it == stops.end() || stop.grace < it->second) stops[key] = stop.grace;
  }
  std::set<TaskKey> unwanted;  // running here, not wanted running
  for (const LocalTask& task : local) {
    if (task.phase != LocalPhase::kRunning || wanted.contains(task.key)) continue;
    unwanted.insert(task.key);
    // Not asked to stop explicitly: fenced, with no grace (see the header).
    const core::Duration grace =
        stops.contains(task.key) ? stops.at(task.key) : core::Duration::Zero();
    if (task.stop_grace && *task.stop_grace <= grace) continue;  // already stopping, sooner
    plan.stop.push_back(protocol::TaskStop{task.key.job, task.key.task, task.key.attempt, grace});
  }
  // An explicit stop for a task that is wanted running (a contradiction the
  // server does not send) or not running here needs nothing.

  std::set<TaskKey> starting;
  for (const protocol::TaskAssignment& task : desired.run) {
    const TaskKey key = KeyOf(task);
    // At most once per attempt: running, stopping or exited, it has run.
    if (by_key.contains(key) || starting.contains(key)) continue;
    bool blocked = false;
    for (const TaskKey& other : unwanted) {
      const LocalTask& holder = *by_key.at(other);
      blocked |=
          Overlap(holder.gpus, task.gpus) || (other.job == key.job && other.task == key.task);
    }
    if (blocked) continue;  // the next round starts it, once the holder is gone
    starting.insert(key);
    plan.start.push_back(task);
  }
  return plan;
}

protocol::Heartbeat BuildHeartbeat(const std::string& node, const std::vector<LocalTask>& local,
                                   const GpuInventoryInfo& inventory,
                                   const std::vector<GpuSample>& samples) {
  protocol::Heartbeat heartbeat;
  heartbeat.node = node;
  for (const LocalTask& task : local) {
    protocol::TaskReport report;
    report.job = task.key.job;
    report.task = task.key.task;
    report.attempt = task.key.attempt;
    if (task.phase == LocalPhase::kRunning) {
      report.phase = protocol::TaskPhase::kRunning;
      report.starting = task.starting;
      report.checkpoint_age = task.checkpoint_age;
    } else {
      if (task.acked || !task.exit) continue;
      report.phase = protocol::TaskPhase::kExited;
      report.exit_code = task.exit->exit_code;
      report.signal = task.exit->signal;
      // An outcome this agent's protocol does not know (a newer supervisor
      // left it) still ended the task: report it as a plain exit.
      report.outcome =
          protocol::ParseTaskOutcome(task.exit->reason).value_or(protocol::TaskOutcome::kExited);
      report.message = task.exit->message;
      if (task.exit->peak_memory_bytes) {
        constexpr int64_t kMiB = 1024 * 1024;
        report.peak_memory = core::MemoryMiB((*task.exit->peak_memory_bytes + kMiB - 1) / kMiB);
      }
      report.cpu_time = task.exit->cpu_time;
    }
    heartbeat.tasks.push_back(report);
  }
  for (const GpuSample& sample : samples) {
    protocol::GpuReport gpu;
    gpu.index = sample.index;
    gpu.healthy = sample.healthy;
    for (const GpuInfo& info : inventory.gpus) {
      if (info.index == sample.index) gpu.interconnect_group = info.interconnect_group;
    }
    heartbeat.gpus.push_back(gpu);
  }
  return heartbeat;
}

std::vector<TaskKey> AcknowledgedExits(const protocol::Heartbeat& sent,
                                       const protocol::DesiredState& reply) {
  std::set<TaskKey> still_wanted;
  for (const protocol::TaskAssignment& task : reply.run) still_wanted.insert(KeyOf(task));
  std::vector<TaskKey> acked;
  for (const protocol::TaskReport& report : sent.tasks) {
    if (report.phase != protocol::TaskPhase::kExited) continue;
    const TaskKey key{report.job, report.task, report.attempt};
    if (!still_wanted.contains(key)) acked.push_back(key);
  }
  return acked;
}

}  // namespace berth::agent
