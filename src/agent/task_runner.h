// TaskRunner: the node's tasks as processes and files. It starts tasks
// (through a detached supervisor each, spawn.h and supervisor.h), asks them
// to stop, and reads back how they are doing from the state dir
// (task_dir.h), which is also how a restarted agent adopts what it left
// running.
//
// Adoption at Open: a task with exit.json has ended; one whose supervisor
// is still alive (same pid, same start time, same boot) is running; one
// whose supervisor is gone without an exit.json is settled as lost: what is
// left of its process group, session and cgroup is killed, its cgroup
// removed and exit.json written (signal 9, reason "lost"); a directory whose
// supervisor never started is removed, so the task can start afresh if the
// server still wants it. Adoption leaves a running task's cgroup alone: its
// limits stay as the kernel keeps them.
//
// Not thread-safe: the agent's loop owns it. (The logs endpoint reads the
// state dir on its own; see LatestTaskDir.)
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/account.h"
#include "agent/cgroup_setup.h"
#include "agent/container_runtime.h"
#include "agent/proc.h"
#include "agent/reconcile.h"
#include "agent/task_dir.h"
#include "protocol/desired_state.h"

namespace berth::agent {

struct TaskRunnerOptions {
  std::string state_dir;
  std::string node;
  // The supervisor's argv before the task dir, e.g. {"/proc/self/exe",
  // "supervise-task"}.
  std::vector<std::string> supervisor_command;
  std::map<std::string, std::string> base_env;  // layer 1 of task_env.h
  // Where tasks' cgroups go (cgroup_setup.h); none: tasks run without.
  std::optional<TaskCgroupConfig> cgroups;
  // Tasks may run as root (uid 0). Off: a root job fails to start with the
  // reason, as on a node whose operator never said otherwise.
  bool allow_root_jobs = false;
  // The node's container runtime (container_runtime.h); none: a task in an
  // image fails to start, saying so (the server sends none here).
  std::optional<ContainerRuntime> containers;
  // The GPUs are real (NVML): containers get them through CDI.
  bool cdi_gpus = false;
  int64_t pids_max = 0;  // each container's pids limit; 0: the runtime's
};

class TaskRunner {
 public:
  static Result<std::unique_ptr<TaskRunner>> Open(TaskRunnerOptions options);

  // Looks at the running tasks again: recorded exits, vanished supervisors;
  // reaps the supervisors this runner started that have exited.
  void Refresh();
  // Every task known here, by key.
  std::vector<LocalTask> Tasks() const;
  // The state dirs of the tasks running now (watched for their exits).
  std::vector<std::string> RunningTaskDirs() const;

  // Starts a task as its job's user (account.h). A failure after its
  // directory exists, a user who cannot run here included, is recorded as
  // the task's outcome (exit code 127, reason "start_failed", the why as its
  // message) and returned.
  Status Start(const protocol::TaskAssignment& assignment);
  // Asks a running task to stop: SIGTERM, SIGKILL after `grace`.
  Status Stop(const TaskKey& key, core::Duration grace);
  // Hands the signals sent to a running task's job (the server's whole list
  // for it) to its supervisor, which delivers each id once: the `signals`
  // file is rewritten and the supervisor woken only when the list changed.
  // Nothing for a task not running here.
  Status Signal(const TaskKey& key, const std::vector<protocol::SignalRequest>& signals);
  // The server has recorded this exit.
  Status MarkAcked(const TaskKey& key);
  // Job steps (step_files.h): hands the step tasks to the running task's
  // supervisor (and wakes it); the ended step tasks of every task here.
  Status DeliverSteps(const TaskKey& key, const std::vector<protocol::StepLaunch>& steps);
  std::vector<protocol::StepTaskReport> StepExits() const;
  // Deletes acknowledged tasks that ended before `cutoff` (logs included).
  int Collect(core::Time cutoff);

  const std::string& tasks_dir() const { return tasks_dir_; }
  // The containers of the running tasks (to keep when leftovers go).
  std::vector<std::string> RunningContainerNames() const;

 private:
  struct Entry {
    LocalTask task;
    std::string dir;
    std::optional<ProcessIdentity> supervisor;
    // Set for tasks started by this process: a supervisor that has not
    // written its pid yet is starting, not lost.
    std::optional<std::chrono::steady_clock::time_point> launched;
  };

  explicit TaskRunner(TaskRunnerOptions options);
  void Adopt(const TaskKey& key, const std::string& dir);
  void RefreshOne(Entry& entry);
  void SettleLost(Entry& entry);
  static std::optional<core::Duration> CheckpointAge(const std::string& dir);
  void RecordOutcome(Entry& entry, ExitStatus status, const std::string& note);
  // The task's directory, spec and the files its user owns (task_dir.h).
  Status Prepare(const protocol::TaskAssignment& assignment, const std::string& dir,
                 const Account& account);
  // Turns the host spec into its container's (container_runtime.h) and
  // writes the container's env file.
  Status PrepareContainer(const protocol::TaskAssignment& assignment, const std::string& dir,
                          const Account& account, TaskSpec& spec);

  TaskRunnerOptions options_;
  RunAsPolicy run_as_;
  std::string tasks_dir_;
  std::map<TaskKey, Entry> entries_;
  // Supervisors started by this process and not yet reaped (spawn.h): its
  // children until they exit, whatever happens to their entries.
  std::vector<pid_t> children_;
};

}  // namespace berth::agent
