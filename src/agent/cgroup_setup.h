// Where this agent's tasks get their cgroups, set up once when the agent
// starts (task_cgroup.h has what each task's cgroup enforces).
//
// The agent finds its own cgroup (/proc/self/cgroup) in each hierarchy
// (/proc/self/mountinfo), and makes a parent for its tasks under it:
//
//   v1 (a v1 hierarchy has the memory controller: legacy and hybrid hosts)
//     <memory mount>/<agent's memory cgroup>/berth-tasks-<id>/<job>-<task>-<attempt>
//     and the same under the cpu, cpuacct, pids and devices hierarchies
//     (memory and cpu are required; the others are used where mounted);
//   v2 (only the unified hierarchy)
//     D/agent                     the agent itself (and the supervisors)
//     D/berth-tasks-<id>/<job>-<task>-<attempt>
//     where D is the agent's delegated cgroup. cgroup v2 lets a cgroup
//     hand controllers to its children only while it holds no process
//     itself ("no internal processes"), so the agent first moves itself
//     into the leaf D/agent (unless it already is in a cgroup named
//     "agent": systemd's DelegateSubgroup=agent), then enables memory, cpu
//     and pids for D's children and for its tasks' parent. D must hold no
//     other process and have those controllers (systemd: Delegate=yes).
//
// <id> comes from the state dir, so two agents on one machine (berth dev)
// never share a parent, and a restarted agent finds the same one. Nothing
// here touches a task's cgroup: a restarted agent adopts its tasks with
// their limits as the kernel keeps them.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "agent/task_cgroup.h"
#include "common/status.h"

namespace berth::agent {

// A cgroup in every hierarchy that matters, by controller (v2: every
// controller names the one directory).
struct CgroupDirs {
  CgroupVersion version = CgroupVersion::kV2;
  std::map<std::string, std::string> dirs;
  bool operator==(const CgroupDirs&) const = default;
};

// One cgroup filesystem from /proc/self/mountinfo.
struct CgroupMount {
  std::string mount_point;            // "/sys/fs/cgroup/memory"
  std::string root;                   // the cgroup mounted there, "/" unless in a container
  bool unified = false;               // cgroup2
  std::set<std::string> controllers;  // v1 only: "memory", "cpu", "cpuacct"...
  bool operator==(const CgroupMount&) const = default;
};

std::vector<CgroupMount> ParseCgroupMounts(std::string_view mountinfo);
// /proc/self/cgroup: the cgroup path by controller ("memory" ->
// "/system.slice/berth-agent.service"); the unified hierarchy's is under "".
std::map<std::string, std::string> ParseProcCgroup(std::string_view text);

// The process's own cgroup directories: v1 where a v1 hierarchy holds the
// memory controller, else v2 where cgroup2 is mounted. Pure.
Result<CgroupDirs> LocateOwnCgroup(const std::vector<CgroupMount>& mounts,
                                   const std::map<std::string, std::string>& own);

// "berth-tasks-1a2b3c4d": the name of this agent's parent of task cgroups.
std::string TaskParentName(const std::string& state_dir);

// Makes the parent of this agent's task cgroups under `own` (see the top
// of the file; on v2 it moves the calling process). Existing directories
// are kept. The error says what is missing or not writable.
Result<CgroupDirs> PrepareTaskParent(const CgroupDirs& own, const std::string& name);

// Removes the parent made by PrepareTaskParent where no task's cgroup is
// left in it (an agent that stopped its tasks before exiting); a parent
// with tasks stays, as it must for a restarted agent to adopt them.
void RemoveTaskParentIfEmpty(const CgroupDirs& parent);

// How this node's tasks get their cgroups: what TaskRunner needs to fill in
// each task's TaskCgroup (task_env.h, CgroupForTask).
struct TaskCgroupConfig {
  CgroupDirs parent;  // from PrepareTaskParent
  int64_t pids_max = 0;
  // Each GPU's device file by index; a GPU without one is not fenced.
  std::map<int32_t, DeviceNumber> gpu_devices;
};

// The whole: reads /proc/self, locates, prepares.
Result<CgroupDirs> SetUpTaskCgroups(const std::string& state_dir);

}  // namespace berth::agent
