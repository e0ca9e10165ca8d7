// Reading and writing the files of a cgroup directory, the way a shell's
// `echo VALUE > FILE` and `cat FILE` do. Each write is one write(2): the
// kernel parses a cgroup file's value per write call, so a value must never
// be split. Writes create missing files (O_CREAT), which the cgroup
// filesystem refuses but a plain directory allows: tests point the same
// code at a fake cgroup tree in a temporary directory.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace berth::agent {

// Writes `value` to DIR/NAME. The error names the file and the value.
Status WriteCgroupFile(const std::string& dir, const std::string& name, const std::string& value);
// The file's whole content, or nullopt when it cannot be read.
std::optional<std::string> ReadCgroupFile(const std::string& dir, const std::string& name);
// A file holding one integer ("67108864\n"), or nullopt ("max", missing).
std::optional<int64_t> ReadCgroupNumber(const std::string& dir, const std::string& name);
// The value of `key` in a flat keyed file ("oom_kill 1" lines: memory.events,
// memory.oom_control, cpu.stat), or nullopt.
std::optional<int64_t> ReadCgroupKey(const std::string& dir, const std::string& name,
                                     const std::string& key);
// The pids in DIR/cgroup.procs (empty when it cannot be read).
std::vector<pid_t> ReadCgroupProcs(const std::string& dir);
bool CgroupFileExists(const std::string& dir, const std::string& name);

}  // namespace berth::agent
