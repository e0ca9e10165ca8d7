// Job steps on a node (protocol::StepLaunch): the files through which the
// agent hands a step task to the supervisor of the job's task that hosts
// it, and learns how it ended. In the task's directory (task_dir.h):
//
//   steps/                    the agent's (0711), made with the first step
//     <step>.<rank>.json      what to run: {"command": [...], "env": {...}}
//     <step>.<rank>.cancel    stop it (its srun was interrupted)
//     <step>.<rank>.out       its stdout and stderr: the task user's (0600),
//                             made by the supervisor
//     <step>.<rank>.exit      how it ended: {"exit_code": N} or {"signal": N},
//                             written once by the supervisor
//
// The supervisor runs each request once, as the task's user, in the task's
// cgroup, with the task's environment and the step's over it (step_host.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace berth::agent {

struct StepTaskName {
  int32_t step = 0;
  int32_t rank = 0;

  std::string Base() const;  // "3.1"
  auto operator<=>(const StepTaskName&) const = default;
};

std::string StepsDir(const std::string& task_dir);
std::string StepFile(const std::string& task_dir, const StepTaskName& name,
                     const std::string& suffix);  // ".json", ".cancel", ".out", ".exit"

struct StepRequestFile {
  StepTaskName name;
  std::vector<std::string> command;
  std::map<std::string, std::string> env;
};

// Hands a step task to the task's supervisor: its request once, and a
// cancel once `cancel` is asked for. Writing the same again changes nothing.
Status DeliverStepTask(const std::string& task_dir, const StepRequestFile& request, bool cancel);

// The step tasks asked of this task, by name, and those asked to stop.
std::vector<StepTaskName> ListStepFiles(const std::string& task_dir, const std::string& suffix);
Result<StepRequestFile> ReadStepRequest(const std::string& task_dir, const StepTaskName& name);

struct StepTaskExit {
  StepTaskName name;
  std::optional<int32_t> exit_code;
  std::optional<int32_t> signal;
};

Status WriteStepExit(const std::string& task_dir, const StepTaskExit& exit);
std::vector<StepTaskExit> ReadStepExits(const std::string& task_dir);

}  // namespace berth::agent
