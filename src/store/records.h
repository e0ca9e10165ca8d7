// What the control plane persists: jobs as users submitted them and as they
// stand, API tokens, nodes, team queues and accounting. Plain values shared
// by the Store implementations (store.h) and the server; no I/O here.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "core/job_state.h"
#include "core/node.h"
#include "core/quota.h"
#include "core/resources.h"
#include "core/time.h"

namespace berth::store {

enum class DependencyKind {
  kAfterOk,     // start after the job succeeded
  kAfterAny,    // start after the job ended, however
  kAfterNotOk,  // start after the job failed or was cancelled
};

struct Dependency {
  DependencyKind kind = DependencyKind::kAfterOk;
  core::JobId job{};
  bool operator==(const Dependency&) const = default;
};

// A set of GPU models as the API and the store write it: "A100-80GB|H100-80GB"
// (one model alone reads as before sets existed: "H100-80GB").
inline std::string JoinModels(const std::vector<std::string>& models) {
  std::string text;
  for (const std::string& model : models) text += (text.empty() ? "" : "|") + model;
  return text;
}
// Every '|' separates two models, so "A|" is "A" and an empty one.
inline std::vector<std::string> SplitModels(std::string_view text) {
  std::vector<std::string> models;
  if (text.empty()) return models;
  for (size_t start = 0;;) {
    const size_t bar = text.find('|', start);
    models.emplace_back(text.substr(start, bar == std::string_view::npos ? bar : bar - start));
    if (bar == std::string_view::npos) break;
    start = bar + 1;
  }
  return models;
}

// A validated submission (server/job_request.h parses and checks it). One
// entry of an array job is one JobRequest with its index.
// A host path the job's container sees (protocol::Mount).
struct ContainerMount {
  std::string source;  // on the node, absolute, within the server's allow-list
  std::string target;  // in the container, absolute
  bool read_only = false;

  bool operator==(const ContainerMount&) const = default;
};

// The image a job's tasks run in, and what they see of the node
// (protocol::Container).
struct ContainerRequest {
  std::string image;
  std::vector<ContainerMount> mounts;
  std::string workdir;  // in the container; empty: the job's workdir, else the image's
  std::map<std::string, std::string> env;
  std::vector<std::string> entrypoint;  // empty: the image's
  bool mount_home = false;              // the user's home, at the same path
  // When the node pulls the image: "missing", "never" or "always"
  // (protocol::ImagePull's words); empty: the node's default.
  std::string pull;

  bool operator==(const ContainerRequest&) const = default;
};

// Slurm's --signal=[B:]SIG[@secs] (protocol::EarlySignal): delivered
// `before` the time limit, once per run.
struct EarlySignalRequest {
  std::string name;  // canonical (protocol/signal_name.h): "USR1"
  core::Duration before = core::Duration::Seconds(60);
  bool batch_only = false;  // only task 0's main process (the batch shell)

  bool operator==(const EarlySignalRequest&) const = default;
};

struct JobRequest {
  std::string name;
  std::vector<std::string> command;  // argv; empty when `script` is set
  std::string script;                // a script body; empty when `command` is set
  int32_t tasks = 1;
  core::TaskShape task{core::WholeGpus(1), core::MilliCpu(0), core::MemoryMiB(0)};
  // Set when the tasks' shapes differ (a Slurm job whose nodes get unequal
  // shares; core::JobSpec::task_shapes): one per task, task 0's first, and
  // `task` is the largest of them. Empty: every task has `task`.
  std::vector<core::TaskShape> task_shapes;
  const core::TaskShape& ShapeOf(size_t rank) const {
    return task_shapes.empty() ? task : task_shapes[rank];
  }
  // GPU thousandths of every task together.
  core::MilliGpu total_gpu() const {
    if (task_shapes.empty()) return task.gpu * tasks;
    core::MilliGpu total;
    for (const core::TaskShape& shape : task_shapes) total += shape.gpu;
    return total;
  }
  // The GPU models it accepts (any one of them); empty: any model.
  std::vector<std::string> gpu_types;
  // Where it may run besides the model (core::NodeConstraints): a feature
  // expression, and node names to keep to or to avoid.
  std::string constraint;
  std::vector<std::string> nodelist;
  std::vector<std::string> exclude;
  // Accepted even when no registered node could ever host it (a cluster
  // that scales up); it waits, infeasible, until one registers.
  bool wait_for_nodes = false;
  // Each task's GPUs inside one interconnect group of its node (one NVLink
  // island): core::GpuLocality::kOneGroup.
  bool gpus_in_one_group = false;
  // Each task on a node of its own (core::NodeSpread::kDistinctNodes).
  bool distinct_nodes = false;
  // A Slurm job (sbatch, #SBATCH lines): one task per node, and here the
  // Slurm tasks on each node, task 0's node first; its SLURM_* variables
  // and srun steps follow it. Empty: not a Slurm job.
  std::vector<int32_t> slurm_tasks_per_node;
  // Asking no memory, it gets its queue's per-CPU default for its CPUs even
  // with GPUs: Slurm's --exclusive, whose GPUs come with its nodes rather
  // than being asked for (Slurm's per-GPU default follows asked GPUs only).
  bool default_memory_per_cpu = false;
  int32_t priority = 0;
  std::string queue;  // empty: the default queue
  std::optional<core::Duration> time_limit;
  std::optional<core::Duration> estimate;
  bool preemptible = false;
  core::Duration grace = core::Duration::Seconds(30);
  std::vector<Dependency> depends_on;
  // Slurm's --dependency=singleton: it starts only once every earlier job
  // of its name and user has ended (however).
  bool singleton = false;
  std::map<std::string, std::string> env;
  std::string workdir;
  // stdout and stderr files (protocol/output_pattern.h); empty: the log.
  std::string output;
  std::string error;
  bool append_output = false;
  int32_t retries = 0;
  // Run again elsewhere when its node is lost (false: the job fails then,
  // for work that must not run twice).
  bool requeue = true;
  bool hold = false;
  // A batch job (sbatch): task 0 runs the command; the other tasks hold
  // their node's share for the job's steps (srun) and end with task 0,
  // whose outcome is the job's.
  bool batch = false;
  std::optional<int32_t> array_index;
  // An array's %N: at most this many of its elements run at once (each
  // element keeps it, so it survives a restart with the job).
  std::optional<int32_t> array_max_running;
  std::optional<ContainerRequest> container;  // none: the tasks run on the host
  std::optional<EarlySignalRequest> signal;   // none: only the limit's SIGTERM

  bool operator==(const JobRequest&) const = default;
};

struct TaskPlacementRecord {
  std::string node;
  std::vector<int32_t> gpus;  // device indices on the node
  bool operator==(const TaskPlacementRecord&) const = default;
};

// One process of a job step (`srun` inside a running job; server/job_step.h):
// its place in the step and, once its node reports it, how it ended.
struct StepTaskRecord {
  int32_t rank = 0;      // SLURM_PROCID
  int32_t job_task = 0;  // the job's task that runs it
  std::string node;
  int32_t node_index = 0;  // SLURM_NODEID: the node's index among the step's nodes
  int32_t local_id = 0;    // SLURM_LOCALID: its index among the step's tasks on its node
  std::optional<int32_t> exit_code;
  std::optional<int32_t> signal;

  bool ended() const { return exit_code.has_value() || signal.has_value(); }
  bool operator==(const StepTaskRecord&) const = default;
};

// A signal sent to a running job's tasks (scancel --signal), stored with
// its job so that one accepted just before a restart still reaches them.
// Nodes deliver each id once.
struct SignalRecord {
  int64_t id = 0;
  std::string name;         // canonical (protocol/signal_name.h): "USR1"
  bool batch_only = false;  // only task 0's main process (scancel --batch)

  bool operator==(const SignalRecord&) const = default;
};

// A job step, stored with its job so that a restarted server still knows
// the steps its running jobs launched (and the ends their nodes reported).
struct StepRecord {
  int32_t id = 0;
  int32_t attempt = 0;  // the job's run it belongs to
  std::vector<std::string> command;
  std::map<std::string, std::string> env;
  std::vector<std::string> nodes;     // the step's nodes, in order
  std::vector<StepTaskRecord> tasks;  // by rank
  bool cancelled = false;
  // When it was launched, and when its last task ended (sacct's step rows).
  std::optional<core::Time> start_time{};
  std::optional<core::Time> end_time{};

  bool operator==(const StepRecord&) const = default;
};

// The first ETA a job was given and its first start: kept with the job from
// that start on, so that a restarted server's ETA calibration (EtaBook) goes
// on from the ETAs judged before it, and the job says what it was told.
struct FirstEtaRecord {
  core::Time given_at;  // when it was given (its plan's time)
  core::Time planned;   // the plan's own ETA, which the calibration learns from
  core::Time expected;  // the point shown
  core::Time low;       // the 80% interval shown
  core::Time high;
  core::Time started;  // the job's first start
  bool operator==(const FirstEtaRecord&) const = default;
};

struct JobRecord {
  core::JobId id{};
  std::string user;
  JobRequest request;
  std::optional<core::JobId> array_parent;  // the first job of its array
  core::JobState state = core::JobState::kPending;
  // Why it is in its state; stored as its API word (core::JobReasonName).
  core::JobReason reason = core::JobReason::kNone;
  std::string message;  // the human sentence for its state and reason
  core::Time submit_time;
  std::optional<core::Time> start_time;  // of the current (or last) run
  std::optional<core::Time> end_time;
  std::vector<TaskPlacementRecord> placement;  // while starting or running
  // MASTER_PORT of its current run on task 0's node (server/master_port.h);
  // none before it starts (or in records from before it was kept).
  std::optional<int32_t> master_port;
  std::optional<int32_t> exit_code;
  std::optional<int32_t> signal;
  int32_t attempts = 0;  // runs started so far (retries and requeues count)
  int32_t preemptions = 0;
  // What its last run that ended used (UsageRecord): none while the first
  // runs, or when its node measured nothing.
  std::optional<core::MemoryMiB> peak_memory;
  std::optional<core::Duration> cpu_time;
  // When its current run last reported a checkpoint (API or the task's
  // checkpoint file): a preemption then loses only the work since. Cleared
  // when a run ends.
  std::optional<core::Time> last_checkpoint;
  // Set at its first start when it had been given an ETA while it waited.
  std::optional<FirstEtaRecord> first_eta;
  // The steps of its current (or last) run, by id; a new run starts with none.
  std::vector<StepRecord> steps;
  // The signals sent to its current run that are still kept, oldest first;
  // cleared when the run ends.
  std::vector<SignalRecord> signals;
  // Bumped by every write; UpdateJobs refuses a stale record (someone else
  // changed the job since it was read).
  int64_t version = 0;

  bool operator==(const JobRecord&) const = default;
};

struct JobFilter {
  std::optional<core::JobState> state;
  std::optional<std::string> user;
  std::optional<std::string> queue;
  bool live_only = false;            // not succeeded, failed or cancelled
  std::optional<core::JobId> after;  // paging: ids greater than this
  int32_t limit = 100;               // at most this many, ascending id
};

// kMetrics: may read /metrics only (a Prometheus scraper).
enum class Role { kAdmin, kUser, kAgent, kMetrics };

struct TokenRecord {
  std::string id;    // public identifier, shown in listings (not secret)
  std::string hash;  // SHA-256 of the secret, hex; the secret is never stored
  std::string user;
  Role role = Role::kUser;
  std::string node;  // agents: the node the token belongs to
  core::Time created;
  std::optional<core::Time> expires;  // refused from this time on; none: never expires
  bool revoked = false;
  bool operator==(const TokenRecord&) const = default;
};

struct NodeRecord {
  std::string name;
  std::string address;  // where its agent listens, e.g. 127.0.0.1:7701
  // The secret the server presents to the agent when it fetches logs (the
  // agent chose it and sent it when it registered).
  std::string logs_key;
  core::NodeSpec spec;  // GPUs, CPU, memory, labels as the agent reported
  core::NodeState state = core::NodeState::kUp;
  bool drained = false;  // an admin asked for it (survives agent restarts)
  core::Time last_heartbeat;
};

// One finished (or interrupted) run, for accounting.
struct UsageRecord {
  core::JobId job{};
  std::string user;
  std::string queue;
  core::MilliGpu gpus;
  core::Time start;
  core::Time end;
  // What its tasks used, as their nodes measured (tasks in cgroups; none
  // where no task was measured): the largest task's peak memory, and the
  // CPU time of all its tasks together.
  std::optional<core::MemoryMiB> peak_memory = std::nullopt;
  std::optional<core::Duration> cpu_time = std::nullopt;
  bool operator==(const UsageRecord&) const = default;
};

}  // namespace berth::store
