// LockFile: an exclusive flock(2) on a file, held while the object lives,
// so that two daemons never share one directory. The kernel drops the lock
// when the process ends, however it ends (kill -9 included): no stale lock
// to clean up by hand. The holder writes who it is into the file, so the
// one refused can say whom it lost to.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "common/status.h"

namespace berth {

class LockFile {
 public:
  // Locks `path` (created 0600 when missing) and writes `holder` into it.
  // FailedPrecondition naming the current holder when another process has
  // it; Unavailable when the file cannot be opened.
  static Result<LockFile> Take(const std::string& path, const std::string& holder) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return Unavailable("cannot open " + path + ": " + std::strerror(errno));
    LockFile lock(fd);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      if (error != EWOULDBLOCK) {
        return Unavailable("cannot lock " + path + ": " + std::strerror(error));
      }
      std::string current = lock.Contents();
      return FailedPrecondition(path + " is held by " +
                                (current.empty() ? std::string("another process") : current));
    }
    // Written only once the lock is ours: a refused process never
    // overwrites the holder's description.
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, holder.data(), holder.size(), 0) < 0) {
      return Unavailable("cannot write " + path + ": " + std::strerror(errno));
    }
    return lock;
  }

  LockFile(LockFile&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  LockFile& operator=(LockFile&& other) noexcept {
    if (this != &other) {
      Release();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  LockFile(const LockFile&) = delete;
  LockFile& operator=(const LockFile&) = delete;
  ~LockFile() { Release(); }

 private:
  explicit LockFile(int fd) : fd_(fd) {}

  void Release() {
    if (fd_ >= 0) ::close(fd_);  // closing drops the flock
    fd_ = -1;
  }

  // What the holder wrote (a line or so; trailing newlines dropped).
  std::string Contents() const {
    char buffer[512];
    const ssize_t n = ::pread(fd_, buffer, sizeof(buffer) - 1, 0);
    std::string text(buffer, n > 0 ? static_cast<size_t>(n) : 0);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
    return text;
  }

  int fd_ = -1;
};

}  // namespace berth
