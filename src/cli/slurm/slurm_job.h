// A Berth job as Slurm's commands show one: its state and reason in
// Slurm's words, its exit code as "code:signal", its nodes, partition and
// times, read from the API's job JSON (server/api_json.cc). Pure: the
// commands that print it (squeue, scontrol, sacct) share this one mapping.
//
// Berth has no accounts, QOS or per-job node counts; what stands for them
// (the queue as partition, a pending job's node count) is said at each
// field below and in docs/from-slurm.md.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/time.h"

namespace berth::cli::slurm {

struct SlurmJob {
  int64_t id = 0;
  // "12_3" for element 3 of the array whose first job is 12, else the id.
  std::string array_id;
  std::optional<int64_t> array_parent;
  std::optional<int64_t> array_index;
  std::optional<int64_t> array_max_running;  // the array's %N, if it has one
  // The row of an array's waiting elements (FoldPendingArrayElements):
  // their indices, "0-3%2"; empty for one job.
  std::string array_tasks;
  std::string name;
  std::string user;
  std::string partition;      // the job's queue, or the default queue's name
  std::string state;          // PENDING, RUNNING, COMPLETED, FAILED, TIMEOUT...
  std::string state_compact;  // PD, R, CD, F, TO...
  std::string reason;         // Priority, Resources, JobHeldUser, None...
  std::string exit_code;      // "3:0", "0:9"
  int64_t tasks = 1;
  int64_t gpus_per_task = 0;  // whole GPUs; a share of one counts as 0
  int64_t cpus = 1;           // the whole job's, at least one per task
  int64_t memory_mib = 0;     // per task
  // Tasks of their own shares (a Slurm job's nodes, 5 + 1 GPUs): each
  // one's, task 0 first; then gpus_per_task and memory_mib are the
  // largest task's. Empty: every task has gpus_per_task and memory_mib.
  struct TaskShare {
    int64_t gpus = 0;
    int64_t cpus = 1;
    int64_t memory_mib = 0;
  };
  std::vector<TaskShare> task_shares;
  int64_t total_gpus = 0;        // the whole job's whole GPUs
  int64_t total_memory_mib = 0;  // the whole job's
  int64_t priority = 0;
  std::vector<std::string> nodes;      // distinct, in placement order
  std::vector<int64_t> tasks_on_node;  // the job's tasks on each of `nodes`
  int64_t gpus_on_busiest_node = 0;
  core::Time submit_time;
  std::optional<core::Time> start_time;
  std::optional<core::Time> end_time;
  std::optional<core::Time> eta;  // a pending job's expected start
  std::optional<int64_t> time_limit_s;
  int64_t restarts = 0;
  bool requeue = true;
  // A batch job (sbatch): its script runs in task 0, sacct's ".batch" row.
  bool batch = false;
  std::string workdir;
  std::string command;

  bool IsPending() const { return state == "PENDING"; }
  bool IsRunning() const { return state == "RUNNING" || state == "COMPLETING"; }
  // Nodes it holds or held, else what it would take: 1 (Berth jobs ask for
  // tasks, not nodes; the scheduler picks how many nodes).
  int64_t NodeCount() const;
  // How long it ran: to `now` while running, 0 while pending.
  int64_t ElapsedSeconds(core::Time now) const;
};

// The Slurm state words of a Berth state and record reason ("failed" with
// "time_limit" is TIMEOUT). {long, compact}.
struct SlurmState {
  std::string name;
  std::string compact;
};
SlurmState MapState(const std::string& state, const std::string& reason);

// Slurm's reason word for a Berth reason: a pending job's scheduler reason
// (resources -> Resources) or an ended job's sub-state (exited ->
// NonZeroExitCode). `message` tells a per-user job limit from a GPU one.
std::string MapReason(const std::string& state, const std::string& reason,
                      const std::string& message, const std::optional<int64_t>& signal);

// Slurm keeps an array's elements that have not started in one record,
// and squeue (without -r) and sacct show them as one row, "12_[0-3%2]"
// (the indices as ranges, the array's limit after '%'): the pending
// elements of each array become one row where the first of them was, its
// id the lowest of theirs, `array_tasks` their indices. The others are
// kept, in order.
std::vector<SlurmJob> FoldPendingArrayElements(std::vector<SlurmJob> jobs);

// `default_partition` names a job submitted to no queue.
SlurmJob SlurmJobFromJson(const nlohmann::json& job, const std::string& default_partition);

}  // namespace berth::cli::slurm
