// A task's own cgroup: the fence around one task. The agent decides where
// it goes and what it may use (cgroup_setup.h, task_env.h); the task's
// supervisor creates it before the task starts, puts the task in it, reads
// what the task used when it ends, and removes it. The limits live in the
// kernel, so an agent's restart changes nothing about them.
//
// Two cgroup versions, one description:
//   v1 (legacy or hybrid hosts): a directory in each controller's own
//      hierarchy: memory, cpu, cpuacct, pids, devices (controllers mounted
//      together share one directory);
//   v2 (the unified hierarchy): one directory; every controller name maps
//      to it, and device isolation is a BPF program (device_program.h).
//
// What is enforced:
//   memory   a limit with no swap on top (v1 memory.limit_in_bytes and
//            memory.memsw.limit_in_bytes where the kernel accounts swap;
//            v2 memory.max and memory.swap.max = 0). Over it, the kernel's
//            OOM killer kills a process of the task;
//   cpu      a CFS quota per 100 ms period (v1 cpu.cfs_quota_us, v2
//            cpu.max): 500 millicores run at most 50 ms of every 100 ms;
//   pids     a cap on processes and threads (pids.max): a fork bomb stays
//            inside its task;
//   devices  the character devices listed (other tasks' GPUs) cannot be
//            opened (v1 devices.deny, v2 the BPF program): EPERM.
// Zero means no limit of that kind. Usage comes back as the peak memory
// (v1 memory.max_usage_in_bytes, v2 memory.peak where the kernel has it),
// the CPU time (v1 cpuacct.usage, v2 cpu.stat usage_usec) and the OOM
// kills (v1 memory.oom_control, v2 memory.events: oom_kill).
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/device_program.h"
#include "common/status.h"
#include "core/time.h"

namespace berth::agent {

enum class CgroupVersion { kV1, kV2 };

// The controllers a task's cgroup uses, by their kernel names.
namespace cgroup_controllers {
inline constexpr char kMemory[] = "memory";
inline constexpr char kCpu[] = "cpu";
inline constexpr char kCpuAccounting[] = "cpuacct";
inline constexpr char kPids[] = "pids";
inline constexpr char kDevices[] = "devices";
}  // namespace cgroup_controllers

struct TaskCgroup {
  CgroupVersion version = CgroupVersion::kV2;
  // The task's directory by controller. A controller the host lacks is
  // absent, and what needs it is not done (no pids limit without pids).
  std::map<std::string, std::string> dirs;
  int64_t memory_mib = 0;
  int64_t cpu_milli = 0;
  int64_t pids_max = 0;
  std::vector<DeviceNumber> denied_devices;

  // Every distinct directory, in order.
  std::vector<std::string> Directories() const;
  bool operator==(const TaskCgroup&) const = default;
};

// The CFS period every quota is a share of.
inline constexpr int64_t kCpuPeriodMicros = 100'000;

// Creates the directories (an existing one is reused) and writes the
// limits. On failure removes what it created; the error names the file.
Status CreateTaskCgroup(const TaskCgroup& cgroup);

// The task's cgroup.procs files, opened before fork, so that the child
// joins its cgroup with nothing but write(2) (between fork and exec only
// async-signal-safe calls are allowed).
class CgroupJoin {
 public:
  static Result<CgroupJoin> Open(const TaskCgroup& cgroup);
  CgroupJoin(CgroupJoin&& other) noexcept : fds_(std::move(other.fds_)) { other.fds_.clear(); }
  CgroupJoin& operator=(CgroupJoin&&) = delete;
  ~CgroupJoin();

  // In the forked child: moves the calling process into the task's cgroup
  // in every hierarchy. Async-signal-safe; false when a write failed.
  bool JoinFromChild() const noexcept;

 private:
  CgroupJoin() = default;
  std::vector<int> fds_;
};

struct CgroupUsage {
  std::optional<int64_t> peak_memory_bytes;
  std::optional<core::Duration> cpu_time;
  int64_t oom_kills = 0;
};

CgroupUsage ReadCgroupUsage(const TaskCgroup& cgroup);

// SIGKILL to every process in the cgroup (v2 cgroup.kill where the kernel
// has it), repeated until none is left or a few seconds passed. For tasks
// whose supervisor is gone: nothing else knows their processes.
void KillCgroup(const TaskCgroup& cgroup);

// Removes the directories, once no process is left in them (the removal is
// retried for a moment: the kernel lets go of a cgroup shortly after its
// last process is reaped). Missing directories are fine.
Status RemoveTaskCgroup(const TaskCgroup& cgroup);

}  // namespace berth::agent
