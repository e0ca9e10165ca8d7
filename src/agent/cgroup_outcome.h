// How a task's cgroup changes the record of its end: what it used, and
// whether the OOM killer ended it.
//
// A task ends "out_of_memory" when it failed (a non-zero exit or a signal)
// by itself (not stopped, not at its time limit) and the kernel's OOM
// killer killed a process in its cgroup: the killed process may be the
// main one (SIGKILL) or a child whose death made it fail (a shell that
// exits 137). A task that succeeded despite an OOM kill succeeded.
#pragma once

#include "agent/task_cgroup.h"
#include "agent/task_dir.h"

namespace berth::agent {

// `status` with the usage recorded and, for a task the OOM killer ended,
// reason "out_of_memory" and the message "out of memory: limit 64 MiB".
ExitStatus WithCgroupUsage(ExitStatus status, const TaskCgroup& cgroup, const CgroupUsage& usage);

}  // namespace berth::agent
