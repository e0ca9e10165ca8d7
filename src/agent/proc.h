// Processes as Linux shows them in /proc: who a pid is (its start time, so a
// recycled pid is never mistaken for the process the agent started), its
// parent, process group and session, for stopping whole trees.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace berth::agent {

struct ProcStat {
  pid_t pid = 0;
  char state = '?';  // 'Z' for a zombie: exited, not yet reaped
  pid_t ppid = 0;
  pid_t pgrp = 0;
  pid_t session = 0;
  uint64_t start_ticks = 0;  // clock ticks after boot
};

// /proc/<pid>/stat, or nullopt when there is no such process.
std::optional<ProcStat> ReadProcStat(pid_t pid);
// Every process visible in /proc (racy by nature: processes come and go).
std::vector<ProcStat> ListProcesses();
// This boot's id (/proc/sys/kernel/random/boot_id): start ticks count from
// boot, so an identity from an earlier boot never matches.
const std::string& BootId();

// A process, told apart from any later process that reuses its pid.
struct ProcessIdentity {
  pid_t pid = 0;
  uint64_t start_ticks = 0;
  std::string boot_id;

  // "pid start_ticks boot_id"
  std::string Format() const;
  static std::optional<ProcessIdentity> Parse(const std::string& text);
  bool operator==(const ProcessIdentity&) const = default;
};

std::optional<ProcessIdentity> IdentityOf(pid_t pid);
// The same process still exists and has not exited (a zombie has).
bool IsAlive(const ProcessIdentity& identity);

}  // namespace berth::agent
