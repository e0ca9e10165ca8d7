#include "agent/task_cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>
#include <thread>

#include "agent/cgroup_files.h"

namespace berth::agent {
namespace {

namespace controllers = cgroup_controllers;

// How long a removal or a kill keeps trying.
constexpr auto kSettleTime = std::chrono::seconds(3);
constexpr auto kSettlePoll = std::chrono::milliseconds(10);

std::optional<std::string> DirOf(const TaskCgroup& cgroup, const char* controller) {
  auto it = cgroup.dirs.find(controller);
  if (it == cgroup.dirs.end()) return std::nullopt;
  return it->second;
}

constexpr int64_t kMiB = 1024 * 1024;

Status WriteMemoryLimit(const TaskCgroup& cgroup, const std::string& dir) {
  const std::string bytes = std::to_string(cgroup.memory_mib * kMiB);
  if (cgroup.version == CgroupVersion::kV1) {
    BERTH_RETURN_IF_ERROR(WriteCgroupFile(dir, "memory.limit_in_bytes", bytes));
    // Memory plus swap, no higher than memory alone: a limit is a limit.
    // Kernels without swap accounting have no such file.
    if (CgroupFileExists(dir, "memory.memsw.limit_in_bytes")) {
      BERTH_RETURN_IF_ERROR(WriteCgroupFile(dir, "memory.memsw.limit_in_bytes", bytes));
    }
    return Status::Ok();
  }
  BERTH_RETURN_IF_ERROR(WriteCgroupFile(dir, "memory.max", bytes));
  if (CgroupFileExists(dir, "memory.swap.max")) {
    BERTH_RETURN_IF_ERROR(WriteCgroupFile(dir, "memory.swap.max", "0"));
  }
  return Status::Ok();
}

Status WriteCpuQuota(const TaskCgroup& cgroup, const std::string& dir) {
  // The kernel's smallest quota is 1 ms.
  const int64_t quota = std::max<int64_t>(1000, cgroup.cpu_milli * kCpuPeriodMicros / 1000);
  if (cgroup.version == CgroupVersion::kV1) {
    BERTH_RETURN_IF_ERROR(
        WriteCgroupFile(dir, "cpu.cfs_period_us", std::to_string(kCpuPeriodMicros)));
    return WriteCgroupFile(dir, "cpu.cfs_quota_us", std::to_string(quota));
  }
  return WriteCgroupFile(dir, "cpu.max",
                         std::to_string(quota) + " " + std::to_string(kCpuPeriodMicros));
}

Status DenyDevices(const TaskCgroup& cgroup, const std::string& dir) {
  if (cgroup.version == CgroupVersion::kV2) return AttachDeviceFilter(dir, cgroup.denied_devices);
  for (const DeviceNumber& device : cgroup.denied_devices) {
    BERTH_RETURN_IF_ERROR(WriteCgroupFile(
        dir, "devices.deny",
        "c " + std::to_string(device.major) + ":" + std::to_string(device.minor) + " rwm"));
  }
  return Status::Ok();
}

Status WriteLimits(const TaskCgroup& cgroup) {
  if (cgroup.memory_mib > 0) {
    if (auto dir = DirOf(cgroup, controllers::kMemory)) {
      BERTH_RETURN_IF_ERROR(WriteMemoryLimit(cgroup, *dir));
    }
  }
  if (cgroup.cpu_milli > 0) {
    if (auto dir = DirOf(cgroup, controllers::kCpu)) {
      BERTH_RETURN_IF_ERROR(WriteCpuQuota(cgroup, *dir));
    }
  }
  if (cgroup.pids_max > 0) {
    if (auto dir = DirOf(cgroup, controllers::kPids)) {
      BERTH_RETURN_IF_ERROR(WriteCgroupFile(*dir, "pids.max", std::to_string(cgroup.pids_max)));
    }
  }
  if (!cgroup.denied_devices.empty()) {
    if (auto dir = DirOf(cgroup, controllers::kDevices)) {
      BERTH_RETURN_IF_ERROR(DenyDevices(cgroup, *dir));
    }
  }
  return Status::Ok();
}

}  // namespace

std::vector<std::string> TaskCgroup::Directories() const {
  std::set<std::string> distinct;
  for (const auto& [controller, dir] : dirs) distinct.insert(dir);
  return {distinct.begin(), distinct.end()};
}

Status CreateTaskCgroup(const TaskCgroup& cgroup) {
  std::vector<std::string> created;
  Status status = Status::Ok();
  for (const std::string& dir : cgroup.Directories()) {
    if (::mkdir(dir.c_str(), 0755) == 0) {
      created.push_back(dir);
    } else if (errno != EEXIST) {
      status = Unavailable("cannot create the task's cgroup " + dir + ": " + std::strerror(errno));
      break;
    }
  }
  if (status.ok()) status = WriteLimits(cgroup);
  if (!status.ok()) {
    for (const std::string& dir : created) ::rmdir(dir.c_str());
  }
  return status;
}

Result<CgroupJoin> CgroupJoin::Open(const TaskCgroup& cgroup) {
  CgroupJoin join;
  for (const std::string& dir : cgroup.Directories()) {
    const std::string path = dir + "/cgroup.procs";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return Unavailable("cannot open " + path + ": " + std::strerror(errno));
    join.fds_.push_back(fd);
  }
  return join;
}

CgroupJoin::~CgroupJoin() {
  for (int fd : fds_) ::close(fd);
}

bool CgroupJoin::JoinFromChild() const noexcept {
  for (int fd : fds_) {
    // "0" is the writing process itself.
    if (::write(fd, "0", 1) != 1) return false;
  }
  return true;
}

CgroupUsage ReadCgroupUsage(const TaskCgroup& cgroup) {
  CgroupUsage usage;
  const bool v1 = cgroup.version == CgroupVersion::kV1;
  if (auto dir = DirOf(cgroup, controllers::kMemory)) {
    usage.peak_memory_bytes =
        ReadCgroupNumber(*dir, v1 ? "memory.max_usage_in_bytes" : "memory.peak");
    usage.oom_kills =
        ReadCgroupKey(*dir, v1 ? "memory.oom_control" : "memory.events", "oom_kill").value_or(0);
  }
  if (v1) {
    if (auto dir = DirOf(cgroup, controllers::kCpuAccounting)) {
      if (auto nanos = ReadCgroupNumber(*dir, "cpuacct.usage")) {
        usage.cpu_time = core::Duration::Micros(*nanos / 1000);
      }
    }
  } else if (auto dir = DirOf(cgroup, controllers::kCpu)) {
    if (auto micros = ReadCgroupKey(*dir, "cpu.stat", "usage_usec")) {
      usage.cpu_time = core::Duration::Micros(*micros);
    }
  }
  return usage;
}

void KillCgroup(const TaskCgroup& cgroup) {
  const std::vector<std::string> dirs = cgroup.Directories();
  if (cgroup.version == CgroupVersion::kV2) {
    for (const std::string& dir : dirs) {
      if (CgroupFileExists(dir, "cgroup.kill")) (void)WriteCgroupFile(dir, "cgroup.kill", "1");
    }
  }
  // Without cgroup.kill (v1, kernels before 5.14) a process may fork while
  // its siblings are killed: sweep until the cgroup is empty.
  const auto deadline = std::chrono::steady_clock::now() + kSettleTime;
  while (std::chrono::steady_clock::now() < deadline) {
    bool any = false;
    for (const std::string& dir : dirs) {
      for (pid_t pid : ReadCgroupProcs(dir)) {
        any = true;
        ::kill(pid, SIGKILL);
      }
    }
    if (!any) return;
    std::this_thread::sleep_for(kSettlePoll);
  }
}

Status RemoveTaskCgroup(const TaskCgroup& cgroup) {
  Status status = Status::Ok();
  for (const std::string& dir : cgroup.Directories()) {
    const auto deadline = std::chrono::steady_clock::now() + kSettleTime;
    while (::rmdir(dir.c_str()) != 0 && errno != ENOENT) {
      if (errno != EBUSY || std::chrono::steady_clock::now() >= deadline) {
        status =
            Unavailable("cannot remove the task's cgroup " + dir + ": " + std::strerror(errno));
        break;
      }
      std::this_thread::sleep_for(kSettlePoll);
    }
  }
  return status;
}

}  // namespace berth::agent
