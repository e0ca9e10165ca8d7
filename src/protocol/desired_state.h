// What the server answers every heartbeat with: the tasks the node must
// run and those it must stop. Agents act only on this answer (and the
// server sends it only once everything it says is durable).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/time.h"
#include "protocol/task_launch.h"

namespace berth::protocol {

// A signal sent to a running job (scancel --signal, POST .../signal). Its
// `id` grows with every request the server takes (across restarts: it
// starts from the server's clock), so a node that sees the same list on
// every answer delivers each request once.
struct SignalRequest {
  int64_t id = 0;
  std::string name;         // canonical (signal_name.h): "USR1"
  bool batch_only = false;  // only task 0's main process (scancel --batch)

  bool operator==(const SignalRequest&) const = default;
};

// One task of a job step (`srun` inside a job), run by the node inside the
// job's task that holds its share of the node: as its user, in its cgroup,
// with its GPUs and environment, plus the step's own variables (SLURM_PROCID,
// SLURM_STEP_ID...). Its output goes to a file of its own beside the task's
// log (agent/step_files.h).
struct StepLaunch {
  int32_t step = 0;
  int32_t rank = 0;  // SLURM_PROCID: its index among the step's tasks
  std::vector<std::string> command;
  std::map<std::string, std::string> env;  // over the task's environment
  bool cancel = false;                     // stop it (its srun was interrupted)

  bool operator==(const StepLaunch&) const = default;
};

// A task an agent must run: which one, where it stands in its gang, and
// how to start it.
struct TaskAssignment {
  core::JobId job{};
  int32_t task = 0;
  int32_t attempt = 0;
  std::string user;  // the job's owner (BERTH_USER)
  TaskLaunch launch;
  std::vector<int32_t> gpus;  // device indices on the node
  int32_t world_size = 1;     // tasks in the gang
  std::string master_addr;    // the node of task 0
  int32_t master_port = 0;
  int32_t node_rank = 0;   // index of this node among the job's nodes
  int32_t local_rank = 0;  // index of this task among the job's tasks on this node
  int32_t local_world_size = 1;
  // The signals sent to this run so far (those still kept, oldest first).
  std::vector<SignalRequest> signals = {};
  // The step tasks this task hosts that have not ended (a running task
  // only; a node that predates steps refuses the field by name).
  std::vector<StepLaunch> steps = {};

  bool operator==(const TaskAssignment&) const = default;
};

struct TaskStop {
  core::JobId job{};
  int32_t task = 0;
  int32_t attempt = 0;
  core::Duration grace;

  bool operator==(const TaskStop&) const = default;
};

// The node lease (issue 32). Each answer grants the node a lease of this
// length, counted by the agent's monotonic clock from when it SENT the
// request (so the node's lease ends no later than the server counts it).
// A node whose lease ended without renewal stops its tasks: the agent, and
// each supervisor on its own if the agent is gone. The server requeues a
// silent node's jobs only after the lease plus a margin that covers
// kLeaseStopWithin: a job never runs on two nodes at once.
//
// What a node promises: every task of it is gone within this long after its
// lease ended (a supervisor notices within a second, SIGTERM, SIGKILL after
// at most 5 s of grace, then its sweep).
inline constexpr core::Duration kLeaseStopWithin = core::Duration::Seconds(8);

struct DesiredState {
  std::vector<TaskAssignment> run;
  std::vector<TaskStop> stop;
  // The lease this answer grants (none: a server without node leases; the
  // node never stops its tasks for silence).
  std::optional<core::Duration> lease = std::nullopt;

  bool operator==(const DesiredState&) const = default;
};

}  // namespace berth::protocol
