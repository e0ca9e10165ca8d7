#include "agent/node_lease.h"

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <sstream>

#include "agent/proc.h"
#include "agent/task_dir.h"

namespace berth::agent {

std::string LeasePath(const std::string& state_dir) { return state_dir + "/" + kLeaseFile; }

Status WriteLeaseEnd(const std::string& path, std::chrono::steady_clock::time_point end) {
  const int64_t nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(end.time_since_epoch()).count();
  return WriteFileAtomic(path, std::to_string(nanos) + " " + BootId() + "\n");
}

Status RemoveLease(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Unavailable("cannot remove " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

std::optional<std::chrono::steady_clock::time_point> ReadLeaseEnd(const std::string& path) {
  Result<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return std::nullopt;
  std::istringstream in(*text);
  int64_t nanos = 0;
  std::string boot;
  if (!(in >> nanos >> boot) || boot != BootId()) return std::nullopt;
  return std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::nanoseconds(nanos)));
}

}  // namespace berth::agent
