#include "agent/cgroup_outcome.h"

namespace berth::agent {

ExitStatus WithCgroupUsage(ExitStatus status, const TaskCgroup& cgroup, const CgroupUsage& usage) {
  status.peak_memory_bytes = usage.peak_memory_bytes;
  status.cpu_time = usage.cpu_time;
  const bool failed = status.signal || (status.exit_code && *status.exit_code != 0);
  if (usage.oom_kills > 0 && failed && status.reason == "exited") {
    status.reason = "out_of_memory";
    // Without a limit of its own, the node (or a parent cgroup) ran out.
    status.message = cgroup.memory_mib > 0
                         ? "out of memory: limit " + std::to_string(cgroup.memory_mib) + " MiB"
                         : "out of memory: the node ran out (the task had no memory limit)";
  }
  return status;
}

}  // namespace berth::agent
