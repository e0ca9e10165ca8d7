// The node's container runtime: podman (the default) or docker, found and
// checked when the agent starts, and the command lines that run a task in
// its image.
//
// Found, not configured (the operator may still add arguments): the agent
// runs `<runtime> info` and reads what the host is like:
//   - cgroup v1 (legacy or hybrid hosts): podman's crun cannot start
//     containers there, so where crun is the default and runc is installed,
//     podman gets `--runtime <runc>`;
//   - no systemd running (/run/systemd/system absent: a container, a CI
//     machine): podman's systemd cgroup manager cannot work, so it gets
//     `--cgroup-manager=cgroupfs`; with systemd (ordinary v2 hosts) the
//     defaults stand;
//   - rlimits: the runtime's default `nofile` and `nproc` limits may exceed
//     what the agent's own process may raise them to (no CAP_SYS_RESOURCE
//     in a container), and the OCI runtime then refuses to start anything
//     ("error setting rlimit type 7"). Every container gets `--ulimit`s at
//     the agent's own hard limits, capped by what the kernel allows at all
//     (fs.nr_open, kernel.pid_max): the same limits a task on the host has.
// A runtime whose `info` fails is no runtime: the node registers without
// one and jobs in an image never go there.
//
// What a container gets (ContainerRunArgv): the job's user (--user uid:gid
// and --group-add for each supplementary group), the host network (NCCL
// and the gang's MASTER_ADDR need it), a large /dev/shm, the job's CPU,
// memory and pids limits, the job's workdir and the user's mounts, the
// task's scratch dir (BERTH_TASK_DIR) and its script, GPUs through CDI
// (`--device nvidia.com/gpu=<index>`, specs made by `nvidia-ctk cdi
// generate`) when they are real, the environment through an env file (not
// argv: `ps` shows argv to everyone), a name from the task's key and labels
// berth.job, berth.task, berth.attempt, berth.node and berth.state (the
// agent's state dir, so an agent removes only its own leftovers).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/task_dir.h"
#include "common/status.h"
#include "protocol/task_launch.h"

namespace berth::agent {

enum class RuntimeKind { kPodman, kDocker };

std::string_view RuntimeKindName(RuntimeKind kind);  // "podman"

// The agent's configuration (its --container-* flags).
struct ContainerRuntimeOptions {
  std::optional<RuntimeKind> kind = RuntimeKind::kPodman;  // none: containers off
  std::string binary;                                      // empty: the kind's name, from PATH
  std::vector<std::string> extra_args;  // after the binary, before the subcommand
  std::string shm_size = "8g";          // /dev/shm of every container
  protocol::ImagePull default_pull = protocol::ImagePull::kMissing;
};

// What the host says, gathered by DetectContainerRuntime; separate so that
// the rules above are tested without a runtime.
struct RuntimeHostFacts {
  std::string info_json;  // `podman info --format json` / `docker info --format '{{json .}}'`
  bool systemd_running = false;
  std::string runc_path;                // empty: no runc binary found
  std::optional<uint64_t> nofile_hard;  // none: unlimited
  std::optional<uint64_t> nproc_hard;
  uint64_t nr_open = 1 << 20;  // /proc/sys/fs/nr_open
  uint64_t pid_max = 1 << 22;  // /proc/sys/kernel/pid_max
};

// A working runtime and how to call it.
struct ContainerRuntime {
  RuntimeKind kind = RuntimeKind::kPodman;
  std::vector<std::string> command;   // binary and global arguments
  std::vector<std::string> run_args;  // for every `run` (the ulimits)
  std::string shm_size = "8g";
  protocol::ImagePull default_pull = protocol::ImagePull::kMissing;
  std::string description;  // "podman 4.3.1 (runc, cgroupfs, cgroup v1)"
};

// The rules above, applied to what the host said. InvalidArgument when
// `info_json` is not the runtime's info.
Result<ContainerRuntime> RuntimeFromFacts(const ContainerRuntimeOptions& options,
                                          const RuntimeHostFacts& facts);

// Runs the runtime's `info` and applies the rules. Unavailable (with the
// runtime's own error) when it does not work. Blocks for up to ~30 s.
Result<ContainerRuntime> DetectContainerRuntime(const ContainerRuntimeOptions& options);

// Everything about one task's container that is not in its launch.
struct ContainerTask {
  TaskKey key;
  std::string node;
  std::string state_dir;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> groups;  // supplementary groups
  std::vector<int32_t> gpus;
  bool cdi_gpus = false;    // real GPUs: exposed through CDI
  std::string env_file;     // the task's environment, written by the runner
  std::string scratch_dir;  // mounted at the same path (BERTH_TASK_DIR)
  std::string script_path;  // the job's script, when it has one
  int64_t pids_max = 0;     // 0: the runtime's default
};

// "berth-<node>-<job>-<task>-<attempt>-<state dir hash>": unique on the
// machine (two agents of one machine never share a name).
std::string ContainerName(const ContainerTask& task);

// The labels every container of this agent carries.
std::map<std::string, std::string> ContainerLabels(const ContainerTask& task);

// The runtime's `run` command for the task: runtime command, `run`, the
// options above, the image, then the entrypoint's arguments and the job's
// command (or its script, mounted at /berth/script).
std::vector<std::string> ContainerRunArgv(const ContainerRuntime& runtime,
                                          const protocol::TaskLaunch& launch,
                                          const ContainerTask& task);

// The variables a container gets: the job's, the container's own, and
// Berth's (task_env.h) without the host's PATH, HOME and the like (the
// image has its own). With CDI the container sees only its GPUs, renumbered
// from 0: CUDA_VISIBLE_DEVICES counts 0..n-1 there (BERTH_GPUS keeps the
// node's indices).
std::map<std::string, std::string> ContainerEnvironment(
    const std::map<std::string, std::string>& task_env, const protocol::Container& container,
    const ContainerTask& task);

// The env file's text ("NAME=value" lines); variables whose value holds a
// newline cannot be written there and are returned in `argv_env` instead
// (passed as `--env NAME=value`).
struct EnvFile {
  std::string text;
  std::vector<std::string> argv_env;
};
EnvFile ContainerEnvFile(const std::map<std::string, std::string>& env);

// How the supervisor manages the container (task_dir.h ContainerSpec).
ContainerSpec ContainerSpecFor(const ContainerRuntime& runtime, const protocol::TaskLaunch& launch,
                               const ContainerTask& task);

// Removes this agent's containers (label berth.state) whose names are not
// in `keep`: leftovers of tasks whose supervisor is gone. Returns the names
// removed.
std::vector<std::string> RemoveLeftoverContainers(const ContainerRuntime& runtime,
                                                  const std::string& state_dir,
                                                  const std::vector<std::string>& keep);

}  // namespace berth::agent
