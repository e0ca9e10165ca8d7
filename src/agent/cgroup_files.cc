#include "agent/cgroup_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <sstream>

namespace berth::agent {
namespace {

std::optional<int64_t> ParseNumber(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

}  // namespace

Status WriteCgroupFile(const std::string& dir, const std::string& name, const std::string& value) {
  const std::string path = dir + "/" + name;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Unavailable("cannot open " + path + " to write '" + value +
                       "': " + std::strerror(errno));
  }
  ssize_t written = 0;
  do {
    written = ::write(fd, value.data(), value.size());
  } while (written < 0 && errno == EINTR);
  const int error = errno;
  ::close(fd);
  if (written != static_cast<ssize_t>(value.size())) {
    return Unavailable("cannot write '" + value + "' to " + path + ": " +
                       (written < 0 ? std::strerror(error) : "short write"));
  }
  return Status::Ok();
}

std::optional<std::string> ReadCgroupFile(const std::string& dir, const std::string& name) {
  const std::string path = dir + "/" + name;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string content;
  char buffer[4096];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    content.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return content;
}

std::optional<int64_t> ReadCgroupNumber(const std::string& dir, const std::string& name) {
  const std::optional<std::string> text = ReadCgroupFile(dir, name);
  if (!text) return std::nullopt;
  return ParseNumber(*text);
}

std::optional<int64_t> ReadCgroupKey(const std::string& dir, const std::string& name,
                                     const std::string& key) {
  const std::optional<std::string> text = ReadCgroupFile(dir, name);
  if (!text) return std::nullopt;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 &&
        line[key.size()] == ' ') {
      return ParseNumber(std::string_view(line).substr(key.size() + 1));
    }
  }
  return std::nullopt;
}

std::vector<pid_t> ReadCgroupProcs(const std::string& dir) {
  std::vector<pid_t> pids;
  const std::optional<std::string> text = ReadCgroupFile(dir, "cgroup.procs");
  if (!text) return pids;
  std::istringstream in(*text);
  for (pid_t pid; in >> pid;) pids.push_back(pid);
  return pids;
}

bool CgroupFileExists(const std::string& dir, const std::string& name) {
  return ::access((dir + "/" + name).c_str(), F_OK) == 0;
}

}  // namespace berth::agent
