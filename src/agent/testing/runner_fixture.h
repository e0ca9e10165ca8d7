// A TaskRunner over a temporary state dir whose supervisor is this test
// binary (test_main.cc routes `supervise-task`), and task builders.
#pragma once

#include <signal.h>

#include <string>
#include <vector>

#include "agent/task_runner.h"
#include "agent/testing/test_util.h"

namespace berth::agent::testing {

inline TaskRunnerOptions RunnerOptions(const std::string& state_dir) {
  TaskRunnerOptions options;
  options.state_dir = state_dir;
  options.node = "node-1";
  options.supervisor_command = {"/proc/self/exe", "supervise-task"};
  options.base_env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}};
  // The tests' tasks run as whoever runs the tests (root in CI).
  options.allow_root_jobs = true;
  return options;
}

// The name of the account running the tests.
inline std::string ThisUser() { return EffectiveUserName(); }

inline protocol::TaskAssignment ShellTask(int64_t job, const std::string& script,
                                          core::Duration grace = core::Duration::Seconds(5)) {
  protocol::TaskAssignment task;
  task.job = core::JobId{job};
  task.task = 0;
  task.attempt = 1;
  task.user = "alice";
  task.launch.run_as.user = ThisUser();
  task.launch.script = script;
  task.launch.grace = grace;
  task.gpus = {0};
  return task;
}

inline std::optional<LocalTask> Find(const TaskRunner& runner, core::JobId job) {
  for (const LocalTask& task : runner.Tasks()) {
    if (task.key.job == job) return task;
  }
  return std::nullopt;
}

// Refreshes until the task of `job` has exited.
inline std::optional<LocalTask> WaitForExit(
    TaskRunner& runner, core::JobId job,
    std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  std::optional<LocalTask> found;
  WaitFor(
      [&] {
        runner.Refresh();
        found = Find(runner, job);
        return found && found->phase == LocalPhase::kExited;
      },
      timeout);
  return found;
}

// A process is gone when /proc has no such pid, or only its zombie.
inline bool Gone(pid_t pid) {
  std::optional<ProcStat> stat = ReadProcStat(pid);
  return !stat || stat->state == 'Z';
}

inline std::vector<pid_t> ReadPids(const std::string& path) {
  std::vector<pid_t> pids;
  std::istringstream in(Slurp(path));
  for (pid_t pid; in >> pid;) pids.push_back(pid);
  return pids;
}

}  // namespace berth::agent::testing
