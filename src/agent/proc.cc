#include "agent/proc.h"

#include <dirent.h>

#include <charconv>
#include <fstream>
#include <sstream>

namespace berth::agent {

std::optional<ProcStat> ReadProcStat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  // The command name is in parentheses and may itself hold spaces and
  // parentheses: the fields start after the last ')'.
  const size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return std::nullopt;
  std::istringstream fields(line.substr(close + 2));
  ProcStat stat;
  stat.pid = pid;
  std::string skip;
  fields >> stat.state >> stat.ppid >> stat.pgrp >> stat.session;
  // Fields 7..21 (tty .. itrealvalue), then 22: starttime.
  for (int i = 7; i <= 21; ++i) fields >> skip;
  fields >> stat.start_ticks;
  if (!fields) return std::nullopt;
  return stat;
}

std::vector<ProcStat> ListProcesses() {
  std::vector<ProcStat> out;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return out;
  while (const dirent* entry = ::readdir(dir)) {
    pid_t pid = 0;
    const char* name = entry->d_name;
    const char* end = name + std::char_traits<char>::length(name);
    if (std::from_chars(name, end, pid).ptr != end || pid <= 0) continue;
    if (std::optional<ProcStat> stat = ReadProcStat(pid)) out.push_back(*stat);
  }
  ::closedir(dir);
  return out;
}

const std::string& BootId() {
  static const std::string id = [] {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string text;
    std::getline(in, text);
    return text.empty() ? std::string("unknown") : text;
  }();
  return id;
}

std::string ProcessIdentity::Format() const {
  return std::to_string(pid) + " " + std::to_string(start_ticks) + " " + boot_id;
}

std::optional<ProcessIdentity> ProcessIdentity::Parse(const std::string& text) {
  std::istringstream in(text);
  ProcessIdentity identity;
  in >> identity.pid >> identity.start_ticks >> identity.boot_id;
  if (!in || identity.pid <= 0) return std::nullopt;
  return identity;
}

std::optional<ProcessIdentity> IdentityOf(pid_t pid) {
  std::optional<ProcStat> stat = ReadProcStat(pid);
  if (!stat) return std::nullopt;
  return ProcessIdentity{pid, stat->start_ticks, BootId()};
}

bool IsAlive(const ProcessIdentity& identity) {
  if (identity.boot_id != BootId()) return false;
  std::optional<ProcStat> stat = ReadProcStat(identity.pid);
  return stat && stat->start_ticks == identity.start_ticks && stat->state != 'Z' &&
         stat->state != 'X';
}

}  // namespace berth::agent
