// What an agent tells the server: its node once at registration (what the
// node has), then on every heartbeat what is true there (its tasks, the
// health of its GPUs). The server converges to these reports; they are
// the node's truth.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "core/resources.h"
#include "core/time.h"

namespace berth::protocol {

struct GpuReport {
  int32_t index = 0;
  int32_t interconnect_group = 0;
  bool healthy = true;

  bool operator==(const GpuReport&) const = default;
};

struct NodeRegistration {
  std::string node;
  std::string address;   // where the agent listens (logs, wake)
  std::string logs_key;  // the bearer secret the agent wants on its requests
  std::string gpu_type;
  std::vector<GpuReport> gpus;
  core::MilliCpu cpu;
  core::MemoryMiB memory;
  std::map<std::string, std::string> labels;
  // What jobs may ask for by name (`--constraint`): "ib", "nvlink".
  std::vector<std::string> features;
  // The node's working container runtime, as the agent found it at start
  // ("podman 4.3.1 (runc, cgroupfs, cgroup v1)"); empty: none.
  std::string container_runtime;

  bool operator==(const NodeRegistration&) const = default;
};

enum class TaskPhase { kRunning, kExited };

// How an exited task ended, as its node saw it. The exit code or signal
// alone cannot tell a task killed at its time limit, or by the OOM killer,
// from one that failed by itself; the server turns these into the job's
// sub-state (core::JobReason).
enum class TaskOutcome {
  kExited,       // its main process exited (or was signalled) by itself
  kStopped,      // stopped on request (cancel, preemption, fencing)
  kTimeLimit,    // stopped at its time limit
  kOutOfMemory,  // killed by the OOM killer at its memory limit
  kStartFailed,  // could not be started (no account for its user, no binary...)
  kLost,         // its supervisor vanished; the agent killed what was left
  // The node's lease ended without renewal (desired_state.h): the node
  // stopped it, as the server will have requeued its job elsewhere.
  kLeaseExpired,
};

std::string_view TaskOutcomeName(TaskOutcome outcome);  // "out_of_memory"
std::optional<TaskOutcome> ParseTaskOutcome(std::string_view name);

// One task as an agent sees it. `attempt` is the job's run number the task
// belongs to, so a task of an earlier run (a job requeued elsewhere while
// its node was away) is recognised and stopped.
struct TaskReport {
  core::JobId job{};
  int32_t task = 0;
  int32_t attempt = 0;
  TaskPhase phase = TaskPhase::kRunning;
  std::optional<int32_t> exit_code;  // exited: one of these two is set
  std::optional<int32_t> signal;
  TaskOutcome outcome = TaskOutcome::kExited;  // exited tasks only
  // What the node says about the end, for people: "out of memory: limit
  // 64 MiB", "user 'bob' has no account on node n3". Empty: nothing to add.
  std::string message = "";

  // What the task used, from its cgroup (exited tasks, on nodes that run
  // tasks in cgroups; none otherwise): its peak memory, rounded up to a
  // MiB, and its CPU time, every process of it together.
  std::optional<core::MemoryMiB> peak_memory = std::nullopt;
  std::optional<core::Duration> cpu_time = std::nullopt;
  // A running task that is still getting ready ("pulling image X"): its job
  // is starting, not running, until this is empty.
  std::string starting = "";
  // Running tasks whose checkpoint file (BERTH_CHECKPOINT_FILE) exists: how
  // long ago it was last touched, by the node's clock when it sent the
  // report. An age, not a time, so the two machines' clocks need not agree.
  // A server that predates it refuses the heartbeat naming the field
  // (tasks[i].checkpoint_age_s: unknown field); an agent that predates it
  // never sends it.
  std::optional<core::Duration> checkpoint_age = std::nullopt;

  bool operator==(const TaskReport&) const = default;
};

// A step task (desired_state.h StepLaunch) that has ended, named by the
// job's task that hosted it. Reported on every heartbeat while its task's
// directory is on the node; the server keeps the first.
struct StepTaskReport {
  core::JobId job{};
  int32_t task = 0;
  int32_t attempt = 0;
  int32_t step = 0;
  int32_t rank = 0;
  std::optional<int32_t> exit_code;  // one of these two is set
  std::optional<int32_t> signal;

  bool operator==(const StepTaskReport&) const = default;
};

struct Heartbeat {
  std::string node;
  std::vector<TaskReport> tasks;
  std::vector<GpuReport> gpus;  // health now; empty: unchanged
  std::vector<StepTaskReport> steps = {};

  bool operator==(const Heartbeat&) const = default;
};

}  // namespace berth::protocol
