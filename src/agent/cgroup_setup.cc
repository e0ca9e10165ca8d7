#include "agent/cgroup_setup.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "agent/cgroup_files.h"
#include "agent/task_dir.h"

namespace berth::agent {
namespace {

namespace controllers = cgroup_controllers;

// The controllers a task's cgroup uses, and those it cannot do without.
const char* const kV1Controllers[] = {controllers::kMemory, controllers::kCpu,
                                      controllers::kCpuAccounting, controllers::kPids,
                                      controllers::kDevices};
const char* const kV1Required[] = {controllers::kMemory, controllers::kCpu};
// v2 has no cpuacct (cpu.stat counts) nor devices controller (a BPF program).
constexpr char kV2Enable[] = "+memory +cpu +pids";
const char* const kV2Required[] = {controllers::kMemory, controllers::kCpu, controllers::kPids};

// The leaf a v2 agent lives in, beside its tasks' parent.
constexpr char kAgentLeaf[] = "agent";

std::vector<std::string> Split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(separator, start), text.size());
    parts.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// mountinfo escapes spaces, tabs, newlines and backslashes as \NNN (octal).
std::string Unescape(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size()) {
      const std::string digits(text.substr(i + 1, 3));
      if (digits.find_first_not_of("01234567") == std::string::npos) {
        out.push_back(static_cast<char>(std::stoi(digits, nullptr, 8)));
        i += 3;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

std::string Join(const std::string& dir, const std::string& path) {
  if (path.empty() || path == "/") return dir;
  return dir + (path.front() == '/' ? "" : "/") + path;
}

// The directory of cgroup `path` in a hierarchy mounted at `mount`.
std::string DirIn(const CgroupMount& mount, const std::string& path) {
  // A mount of a sub-cgroup (a container's) shows paths under its root.
  if (mount.root != "/" && path.rfind(mount.root, 0) == 0) {
    return Join(mount.mount_point, path.substr(mount.root.size()));
  }
  return Join(mount.mount_point, path);
}

Status MakeDir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST) return Status::Ok();
  return Unavailable("cannot create " + dir + ": " + std::strerror(errno));
}

std::set<std::string> Words(const std::optional<std::string>& text) {
  std::set<std::string> words;
  if (!text) return words;
  std::istringstream in(*text);
  for (std::string word; in >> word;) words.insert(word);
  return words;
}

Result<CgroupDirs> PrepareV1(const CgroupDirs& own, const std::string& name) {
  CgroupDirs parent{CgroupVersion::kV1, {}};
  for (const auto& [controller, dir] : own.dirs) {
    const std::string path = dir + "/" + name;
    BERTH_RETURN_IF_ERROR(MakeDir(path));
    parent.dirs[controller] = path;
  }
  return parent;
}

// Moves this process into D/agent unless it is there already; returns D.
Result<std::string> LeaveForLeaf(const std::string& own) {
  const std::filesystem::path path(own);
  if (path.filename() == kAgentLeaf) return path.parent_path().string();
  const pid_t self = ::getpid();
  for (pid_t pid : ReadCgroupProcs(own)) {
    if (pid != self) {
      return FailedPrecondition(
          own + " holds other processes than the agent (pid " + std::to_string(pid) +
          "): cgroup v2 needs the agent in a cgroup of its own, with the memory, cpu and pids "
          "controllers delegated (systemd: Delegate=yes, DelegateSubgroup=agent)");
    }
  }
  const std::string leaf = own + "/" + kAgentLeaf;
  BERTH_RETURN_IF_ERROR(MakeDir(leaf));
  BERTH_RETURN_IF_ERROR(WriteCgroupFile(leaf, "cgroup.procs", std::to_string(self)));
  return own;
}

Status EnableControllers(const std::string& dir) {
  const std::set<std::string> enabled = Words(ReadCgroupFile(dir, "cgroup.subtree_control"));
  bool all = true;
  for (const char* controller : kV2Required) all &= enabled.contains(controller);
  if (all) return Status::Ok();
  return WriteCgroupFile(dir, "cgroup.subtree_control", kV2Enable);
}

Result<CgroupDirs> PrepareV2(const CgroupDirs& own, const std::string& name) {
  const std::string own_dir = own.dirs.begin()->second;
  BERTH_ASSIGN_OR_RETURN(const std::string delegated, LeaveForLeaf(own_dir));
  const std::set<std::string> available = Words(ReadCgroupFile(delegated, "cgroup.controllers"));
  for (const char* controller : kV2Required) {
    if (!available.contains(controller)) {
      return FailedPrecondition(delegated + " has no " + controller +
                                " controller to give its tasks (cgroup.controllers: '" +
                                ReadCgroupFile(delegated, "cgroup.controllers").value_or("") +
                                "'): delegate memory, cpu and pids to the agent (systemd: "
                                "Delegate=yes)");
    }
  }
  BERTH_RETURN_IF_ERROR(EnableControllers(delegated));
  const std::string parent = delegated + "/" + name;
  BERTH_RETURN_IF_ERROR(MakeDir(parent));
  BERTH_RETURN_IF_ERROR(EnableControllers(parent));
  CgroupDirs dirs{CgroupVersion::kV2, {}};
  for (const char* controller : kV1Controllers) dirs.dirs[controller] = parent;
  return dirs;
}

}  // namespace

std::vector<CgroupMount> ParseCgroupMounts(std::string_view mountinfo) {
  std::vector<CgroupMount> mounts;
  for (const std::string& line : Split(mountinfo, '\n')) {
    // ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER_OPTIONS
    const std::vector<std::string> fields = Split(line, ' ');
    const auto dash = std::find(fields.begin(), fields.end(), "-");
    if (fields.size() < 6 || dash == fields.end() || fields.end() - dash < 4) continue;
    const std::string& type = *(dash + 1);
    if (type != "cgroup" && type != "cgroup2") continue;
    CgroupMount mount;
    mount.root = Unescape(fields[3]);
    mount.mount_point = Unescape(fields[4]);
    mount.unified = type == "cgroup2";
    if (!mount.unified) {
      for (const std::string& option : Split(*(dash + 3), ',')) {
        if (option != "rw" && option != "ro" && option.find('=') == std::string::npos) {
          mount.controllers.insert(option);
        }
      }
    }
    mounts.push_back(std::move(mount));
  }
  return mounts;
}

std::map<std::string, std::string> ParseProcCgroup(std::string_view text) {
  std::map<std::string, std::string> paths;
  for (const std::string& line : Split(text, '\n')) {
    // ID:CONTROLLERS:PATH; the unified hierarchy is "0::PATH".
    const size_t first = line.find(':');
    const size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (controllers.empty()) {
      paths[""] = path;
      continue;
    }
    for (const std::string& controller : Split(controllers, ',')) paths[controller] = path;
  }
  return paths;
}

Result<CgroupDirs> LocateOwnCgroup(const std::vector<CgroupMount>& mounts,
                                   const std::map<std::string, std::string>& own) {
  const auto v1_mount = [&](const std::string& controller) -> const CgroupMount* {
    for (const CgroupMount& mount : mounts) {
      if (!mount.unified && mount.controllers.contains(controller)) return &mount;
    }
    return nullptr;
  };
  if (v1_mount(controllers::kMemory) != nullptr) {
    CgroupDirs dirs{CgroupVersion::kV1, {}};
    for (const char* controller : kV1Controllers) {
      const CgroupMount* mount = v1_mount(controller);
      auto path = own.find(controller);
      if (mount == nullptr || path == own.end()) continue;
      dirs.dirs[controller] = DirIn(*mount, path->second);
    }
    for (const char* controller : kV1Required) {
      if (!dirs.dirs.contains(controller)) {
        return FailedPrecondition(std::string("cgroup v1: no ") + controller +
                                  " hierarchy is mounted");
      }
    }
    return dirs;
  }
  for (const CgroupMount& mount : mounts) {
    auto path = own.find("");
    if (!mount.unified || path == own.end()) continue;
    CgroupDirs dirs{CgroupVersion::kV2, {}};
    const std::string dir = DirIn(mount, path->second);
    for (const char* controller : kV1Controllers) dirs.dirs[controller] = dir;
    return dirs;
  }
  return FailedPrecondition("no cgroup filesystem is mounted");
}

std::string TaskParentName(const std::string& state_dir) {
  std::error_code error;
  std::string absolute = std::filesystem::absolute(state_dir, error).lexically_normal();
  while (absolute.size() > 1 && absolute.back() == '/') absolute.pop_back();
  // FNV-1a: stable across builds and machines, unlike std::hash.
  uint64_t hash = 14695981039346656037ull;
  for (char c : error ? state_dir : absolute) {
    hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  }
  char name[32];
  std::snprintf(name, sizeof name, "berth-tasks-%08x", static_cast<unsigned>(hash ^ (hash >> 32)));
  return name;
}

Result<CgroupDirs> PrepareTaskParent(const CgroupDirs& own, const std::string& name) {
  if (own.dirs.empty()) return FailedPrecondition("no cgroup to put tasks under");
  if (own.version == CgroupVersion::kV1) return PrepareV1(own, name);
  return PrepareV2(own, name);
}

void RemoveTaskParentIfEmpty(const CgroupDirs& parent) {
  std::set<std::string> dirs;
  for (const auto& [controller, dir] : parent.dirs) dirs.insert(dir);
  for (const std::string& dir : dirs) ::rmdir(dir.c_str());  // EBUSY while tasks remain
}

Result<CgroupDirs> SetUpTaskCgroups(const std::string& state_dir) {
  const Result<std::string> mountinfo = ReadWholeFile("/proc/self/mountinfo");
  const Result<std::string> own = ReadWholeFile("/proc/self/cgroup");
  if (!mountinfo.ok() || !own.ok())
    return Unavailable("cannot read /proc/self/mountinfo or cgroup");
  BERTH_ASSIGN_OR_RETURN(const CgroupDirs dirs,
                         LocateOwnCgroup(ParseCgroupMounts(*mountinfo), ParseProcCgroup(*own)));
  return PrepareTaskParent(dirs, TaskParentName(state_dir));
}

}  // namespace berth::agent
