// What the supervisor does around a task that runs in a container
// (task_dir.h ContainerSpec), besides running the runtime's `run` itself:
// make the image ready as its pull policy says, stop the container through
// the runtime, and after it ended read how (out of memory?) and remove it.
// Blocking calls of the runtime (run_command.h).
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>

#include "agent/task_dir.h"
#include "common/status.h"

namespace berth::agent {

// Makes the image available: present already (missing, never), or pulled
// (always; missing when absent). While it pulls, `<task_dir>/starting` says
// "pulling image X" (the agent reports the task as still starting). The
// error names the image and carries the runtime's own last line. A pull is
// abandoned once `stopped` says the task was stopped meanwhile (a cancel,
// the node's lease), with FailedPrecondition.
Status PrepareImage(const std::string& task_dir, const ContainerSpec& container,
                    const std::function<bool()>& stopped);

// Starts `<runtime> stop -t <seconds> <name>` without waiting for it (the
// runtime sends SIGTERM, then SIGKILL after the grace); its pid, to reap.
pid_t StartContainerStop(const ContainerSpec& container, int64_t grace_seconds);

// Starts `<runtime> kill --signal <n> <name>` without waiting for it (to
// the container's main process); its pid, to reap.
pid_t StartContainerKill(const ContainerSpec& container, int signal_number);

// How the container ended, as the runtime recorded it; nullopt when it does
// not know the container (it was never created).
struct ContainerEnd {
  bool oom_killed = false;
  int exit_code = 0;
};
std::optional<ContainerEnd> InspectContainer(const ContainerSpec& container);

// Removes the container (and stops it first if it still runs). The error
// is the runtime's.
Status RemoveContainer(const ContainerSpec& container);

}  // namespace berth::agent
