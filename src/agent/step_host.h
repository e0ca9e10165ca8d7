// The supervisor's side of job steps (step_files.h): it runs the step tasks
// the agent hands to its task, each once, as the task's user, in the task's
// cgroup, in its working directory, with the task's environment and the
// step's variables over it, stdout and stderr to the step task's .out file;
// stops one whose .cancel appears (SIGTERM, SIGKILL a few seconds later);
// and writes each one's .exit when it ends. Step tasks are children of the
// supervisor, so they end with the task as its other processes do.
//
// Not thread-safe: the supervisor's loop owns it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "agent/step_files.h"
#include "agent/task_cgroup.h"
#include "agent/task_dir.h"

namespace berth::agent {

class StepHost {
 public:
  // REQUIRES: `spec` and `join` outlive the host.
  StepHost(std::string task_dir, const TaskSpec& spec, const std::optional<CgroupJoin>& join)
      : dir_(std::move(task_dir)), spec_(spec), join_(join) {}

  // Starts the step tasks asked for since the last call (none once the
  // task is ending: `accepting` false), signals those asked to stop.
  void Poll(bool accepting);
  // A reaped child: true when it was a step task (its exit is written).
  bool Reaped(pid_t pid, int wait_status);

 private:
  struct Running {
    StepTaskName name;
    bool cancelled = false;
    std::optional<std::chrono::steady_clock::time_point> kill_at;
  };

  void Start(const StepTaskName& name);

  const std::string dir_;
  const TaskSpec& spec_;
  const std::optional<CgroupJoin>& join_;
  std::map<StepTaskName, bool> seen_;  // started (or failed to), by name
  std::map<pid_t, Running> running_;
};

}  // namespace berth::agent
