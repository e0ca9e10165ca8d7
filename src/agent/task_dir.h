// The agent's state directory: everything a restarted agent needs to find
// its tasks again, and the only channel between the agent and the per-task
// supervisors (which outlive it).
//
//   STATE/tasks/<job>-<task>-<attempt>/
//     spec.json       what to run: argv, env, workdir, time limit, grace, GPUs,
//                     the account, the task's cgroup and its limits (the agent
//                     writes it before the supervisor starts)
//     script          the job's script, when it has one instead of a command
//     log             the task's stdout and stderr, and the supervisor's notes
//     work/           the task's scratch dir and default working directory
//     supervisor.pid  "pid start_ticks boot_id" of the supervisor
//     task.pid        the same for the task's main process (its process group)
//     stop            a stop request: the grace period in milliseconds
//     signals         signals sent to the running job (scancel --signal), one
//                     a line: "<id> <signal number> batch|all"; the agent
//                     rewrites it and sends the supervisor SIGUSR1, which
//                     delivers each id it has not delivered yet
//     container.env   a container task's environment (the runtime's --env-file)
//     starting        what a task does before it runs ("pulling image X"),
//                     while it does it
//     exit.json       the outcome, written once by the supervisor when the
//                     task and every process it started are gone
//     acked           the server has seen the exit (no need to report it again)
//   STATE/lease       the end of the node's lease (node_lease.h)
//
// Every file is written whole to a temporary name and renamed, so a reader
// (or a crash) never sees half of one. Who may read what: the directory is
// the agent's (0711: a task reaches its work/ but lists nothing), and so
// is every file in it (0600: spec.json holds the job's env), except three
// that are the task user's: script (0700), log (0600) and work/ (0700).
// A task can neither read another's spec, env or log nor forge its own
// exit. A task is named by its attempt: a
// requeued job's next run gets a new directory, and the old one stays until
// it is collected.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/task_cgroup.h"
#include "common/status.h"
#include "core/ids.h"
#include "core/time.h"

namespace berth::agent {

struct TaskKey {
  core::JobId job{};
  int32_t task = 0;
  int32_t attempt = 0;

  std::string DirName() const;  // "12-0-1"
  static std::optional<TaskKey> FromDirName(const std::string& name);
  auto operator<=>(const TaskKey&) const = default;
};

std::string ToString(const TaskKey& key);  // "job 12 task 0 attempt 1"

namespace task_files {
inline constexpr char kSpec[] = "spec.json";
inline constexpr char kScript[] = "script";
inline constexpr char kLog[] = "log";
inline constexpr char kSupervisor[] = "supervisor.pid";
inline constexpr char kTask[] = "task.pid";
inline constexpr char kStop[] = "stop";
inline constexpr char kSignals[] = "signals";
inline constexpr char kExit[] = "exit.json";
inline constexpr char kAcked[] = "acked";
inline constexpr char kWork[] = "work";
inline constexpr char kContainerEnv[] = "container.env";
inline constexpr char kStarting[] = "starting";
}  // namespace task_files

// The account the supervisor becomes before it execs the task: the groups,
// then the gid, then the uid (resolved by the agent through NSS; the
// supervisor is static and looks nothing up).
struct TaskIdentity {
  std::string user;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> groups;

  bool operator==(const TaskIdentity&) const = default;
};

// A task that runs in a container (container_runtime.h): the supervisor
// makes sure the image is there (pulling it as `pull` says), runs `argv`
// (the runtime's `run`) as root (the container gets the job's user), stops
// it through the runtime, reads how it ended and removes it.
struct ContainerSpec {
  std::string name;
  std::vector<std::string> runtime;  // the runtime's binary and global arguments
  std::string kind;                  // "podman" or "docker"
  std::string image;
  std::string pull;        // "missing", "never" or "always"
  int64_t memory_mib = 0;  // its memory limit, for the out-of-memory message

  bool operator==(const ContainerSpec&) const = default;
};

// Slurm's --signal=[B:]SIG[@secs] on the node: `signal` (the host's
// number) `before` the time limit, once; only to the task's main process
// when `batch_only` (and then only task 0's: Slurm's batch shell).
struct EarlySignalSpec {
  int signal = 0;
  core::Duration before;
  bool batch_only = false;

  bool operator==(const EarlySignalSpec&) const = default;
};

// A line of the `signals` file.
struct SignalLine {
  int64_t id = 0;
  int signal = 0;
  bool batch_only = false;

  bool operator==(const SignalLine&) const = default;
};
std::string SignalsFileText(const std::vector<SignalLine>& lines);
// The lines that parse (a torn or foreign line is skipped).
std::vector<SignalLine> ParseSignalsFile(const std::string& text);

struct TaskSpec {
  TaskKey key;
  std::vector<std::string> argv;  // argv[0] is looked up in the task's PATH
  std::vector<std::string> env;   // "NAME=value", the task's whole environment
  std::string workdir;
  std::optional<core::Duration> time_limit;
  core::Duration grace = core::Duration::Seconds(30);
  std::optional<EarlySignalSpec> early_signal;  // only with a time limit
  std::vector<int32_t> gpus;
  // The job's --output and --error files, expanded and absolute, opened by
  // the task's user; empty: the log (stderr: with stdout).
  std::string output_path;
  std::string error_path;
  bool append_output = false;
  // None: the task runs as the supervisor's own user (an agent that is not
  // root runs tasks of its own user only).
  std::optional<TaskIdentity> run_as;
  // Where the task's cgroup goes and its limits; none: the node runs tasks
  // without cgroups (the agent said why when it started).
  std::optional<TaskCgroup> cgroup;
  // The node lease's file (node_lease.h): the supervisor stops the task
  // when the lease it holds has ended. Empty: no fencing (a spec written
  // before node leases).
  std::string lease_file;
  // None: the task runs on the host.
  std::optional<ContainerSpec> container;
};

std::string TaskSpecJson(const TaskSpec& spec);
Result<TaskSpec> ParseTaskSpec(const std::string& text);

// How a task ended.
struct ExitStatus {
  std::optional<int32_t> exit_code;  // it exited
  std::optional<int32_t> signal;     // or a signal killed it
  // "exited", "stopped" (asked to), "time_limit", "out_of_memory" (killed by
  // the OOM killer at its cgroup's limit), "start_failed" or "lost" (its
  // supervisor vanished without a word: the agent stopped what was left)
  // or "lease_expired" (stopped when the node's lease ended, node_lease.h):
  // the names of protocol::TaskOutcome.
  std::string reason;
  core::Time end_time;
  // For people, reported to the server: "user 'bob' has no account on node
  // n3". Empty: the reason says it all.
  std::string message = "";
  // What the task used, from its cgroup (none: it ran without one, or the
  // kernel does not say).
  std::optional<int64_t> peak_memory_bytes = std::nullopt;
  std::optional<core::Duration> cpu_time = std::nullopt;
};

std::string ExitStatusJson(const ExitStatus& status);
Result<ExitStatus> ParseExitStatus(const std::string& text);

// Writes `content` to `path` through a temporary file and rename.
Status WriteFileAtomic(const std::string& path, const std::string& content);
// The whole file; NotFound when it does not exist.
Result<std::string> ReadWholeFile(const std::string& path);
bool FileExists(const std::string& path);

// The directory of the latest attempt of `job`/`task` under `tasks_dir`, or
// nullopt. Reads only the directory (the logs endpoint calls it from its
// own threads).
std::optional<std::string> LatestTaskDir(const std::string& tasks_dir, core::JobId job,
                                         int32_t task);

}  // namespace berth::agent
