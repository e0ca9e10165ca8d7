// The agent's decisions, as pure functions of what the server wants and what
// is true on the node: no I/O, no clock, so every rule is a table test.
//
//   heartbeat  <- BuildHeartbeat(local truth, GPU samples)
//   reply      -> Reconcile(desired, local truth) -> starts and stops
//              -> AcknowledgedExits(reported exits, reply) -> stop reporting them
//
// Rules (why each holds is in reconcile.cc):
//   - A task is named by (job, task, attempt) and runs at most once on a
//     node: a run entry for a task that is running, stopping or exited here
//     changes nothing. Repeating a message is therefore harmless.
//   - An explicit stop stops that task with that grace period; a second stop
//     only ever shortens the grace.
//   - A running task the server neither wants running nor asks to stop (a
//     task of an older attempt, a job that ended elsewhere) is stopped with
//     no grace: the server already counts its GPUs as free. This is fencing:
//     a job never runs twice.
//   - A start waits while an unwanted task still holds any of its GPUs or is
//     an older attempt of the same task.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/gpu_inventory.h"
#include "agent/task_dir.h"
#include "protocol/desired_state.h"
#include "protocol/node_report.h"

namespace berth::agent {

enum class LocalPhase { kRunning, kExited };

// One task as the node knows it.
struct LocalTask {
  TaskKey key;
  LocalPhase phase = LocalPhase::kRunning;
  std::optional<ExitStatus> exit;  // set when exited
  std::vector<int32_t> gpus;
  std::optional<core::Duration> stop_grace;  // a stop was asked for, with this grace
  bool acked = false;                        // the server has seen its exit
  // What a running task does before it runs ("pulling image X"); empty:
  // it runs.
  std::string starting = "";
  // Running: how long ago its checkpoint file (task_env.h CheckpointFile)
  // was touched, as of the last refresh; none: it has no such file.
  std::optional<core::Duration> checkpoint_age = std::nullopt;
};

struct ReconcilePlan {
  std::vector<protocol::TaskAssignment> start;
  std::vector<protocol::TaskStop> stop;
};

ReconcilePlan Reconcile(const protocol::DesiredState& desired, const std::vector<LocalTask>& local);

// Running tasks, and exited ones the server has not acknowledged; the health
// of every GPU.
protocol::Heartbeat BuildHeartbeat(const std::string& node, const std::vector<LocalTask>& local,
                                   const GpuInventoryInfo& inventory,
                                   const std::vector<GpuSample>& samples);

// The exits a successful heartbeat carried that the server has now recorded:
// those it does not ask to run again. (One it still lists lost its exit,
// e.g. in a server restart; it stays reported until the server has it.)
std::vector<TaskKey> AcknowledgedExits(const protocol::Heartbeat& sent,
                                       const protocol::DesiredState& reply);

}  // namespace berth::agent
