// TaskLaunch: everything a node needs to start one task of a job, and
// nothing of how the server keeps the job (no queue, priority, retries or
// dependencies). The server builds it from its job record
// (server/task_launch.h); the agent starts the task from it alone.
//
// `limits` (the job's per-task CPU and memory request) are enforced in the
// task's cgroup (agent/task_cgroup.h), or by the container runtime when the
// task runs in a container (agent/container_args.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/resources.h"
#include "core/time.h"

namespace berth::protocol {

// Who the task runs as: the job's owner, an account name that each node
// resolves itself (agent/account.h), as nodes share one uid space.
struct RunAs {
  std::string user;

  bool operator==(const RunAs&) const = default;
};

// What the task may use on the node: the job's per-task request. Zero: the
// job asked for none of it.
struct ResourceLimits {
  core::MilliCpu cpu;
  core::MemoryMiB memory;

  bool operator==(const ResourceLimits&) const = default;
};

// A host path made visible inside a container.
struct Mount {
  std::string source;  // on the node
  std::string target;  // in the container
  bool read_only = false;

  bool operator==(const Mount&) const = default;
};

// When a node fetches a container's image from its registry.
enum class ImagePull {
  kMissing,  // only when the node does not have it
  kNever,    // never: the image must be on the node already
  kAlways,   // before every start, so a moved tag is followed
};

std::string_view ImagePullName(ImagePull pull);  // "missing"
std::optional<ImagePull> ParseImagePull(std::string_view name);

// The container a task runs in. The job's `workdir`, when set, is mounted
// at the same path too, and is the container's working directory unless
// `workdir` here names another.
struct Container {
  std::string image;
  std::vector<Mount> mounts;  // the user's home among them, if asked for
  std::string workdir;        // in the container; empty: the job's, else the image's
  std::map<std::string, std::string> env;
  std::vector<std::string> entrypoint;  // empty: the image's
  std::optional<ImagePull> pull;        // none: the node's default

  bool operator==(const Container&) const = default;
};

// A Slurm job's allocation (sbatch, #SBATCH lines), for the SLURM_*
// variables its tasks see (agent/slurm_env.h) and its srun steps: the job
// is one task per node.
struct SlurmAllocation {
  std::vector<std::string> nodes;       // the job's nodes, task 0's first
  std::vector<int32_t> tasks_per_node;  // Slurm tasks on each of them
  std::string partition;                // the job's queue
  std::string cluster;                  // SLURM_CLUSTER_NAME
  // The CPUs Slurm counts on each of them (a CPU per Slurm task at least),
  // for a job whose nodes' shares differ; empty: every node has this
  // node's share.
  std::vector<int32_t> cpus_per_node = {};

  bool operator==(const SlurmAllocation&) const = default;
};

// Slurm's --signal=[B:]SIG[@secs]: a signal the node delivers `before` the
// time limit, once per run (then the limit stops the task as always).
struct EarlySignal {
  std::string name;  // canonical (signal_name.h): "USR1"
  core::Duration before = core::Duration::Seconds(60);
  // Only task 0's main process (Slurm's batch shell, "B:"); else every
  // process of every task.
  bool batch_only = false;

  bool operator==(const EarlySignal&) const = default;
};

struct TaskLaunch {
  std::string name;                  // the job's name
  std::vector<std::string> command;  // argv; empty when `script` is set
  std::string script;                // a script body; empty when `command` is set
  std::map<std::string, std::string> env;
  std::string workdir;  // empty: the task's directory on the node
  // Where stdout and stderr go, as output_pattern.h patterns relative to
  // the working directory, opened as the job's user. Empty `output`: the
  // task's log on the node; empty `error`: with stdout.
  std::string output;
  std::string error;
  bool append_output = false;  // --open-mode append (else truncate)
  // The job's array, for %A and %a: its first job and this job's index.
  std::optional<int64_t> array_job;
  std::optional<int32_t> array_index;
  std::optional<core::Duration> time_limit;
  core::Duration grace = core::Duration::Seconds(30);  // between SIGTERM and SIGKILL
  std::optional<EarlySignal> signal = std::nullopt;    // none: only the limit's SIGTERM
  RunAs run_as;
  ResourceLimits limits;
  std::optional<Container> container;  // none: the task runs on the host
  // None: not a Slurm job. On the wire only when set, so that the launches
  // of other jobs read the same to an agent that predates it.
  std::optional<SlurmAllocation> slurm;

  bool operator==(const TaskLaunch&) const = default;
};

}  // namespace berth::protocol
