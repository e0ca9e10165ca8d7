#include "agent/wakeup.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "agent/task_dir.h"

namespace berth::agent {

Result<std::unique_ptr<Wakeup>> Wakeup::Create() {
  const int inotify_fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_fd < 0) return Unavailable(std::string("inotify_init1: ") + std::strerror(errno));
  const int event_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (event_fd < 0) {
    const int error = errno;
    ::close(inotify_fd);
    return Unavailable(std::string("eventfd: ") + std::strerror(error));
  }
  return std::unique_ptr<Wakeup>(new Wakeup(inotify_fd, event_fd));
}

Wakeup::~Wakeup() {
  ::close(inotify_fd_);
  ::close(event_fd_);
}

void Wakeup::WatchTaskDirs(const std::vector<std::string>& dirs) {
  const std::set<std::string> wanted(dirs.begin(), dirs.end());
  for (auto it = watches_.begin(); it != watches_.end();) {
    if (wanted.contains(it->first)) {
      ++it;
      continue;
    }
    // Fails harmlessly when the dir is gone (the kernel dropped the watch).
    ::inotify_rm_watch(inotify_fd_, it->second);
    it = watches_.erase(it);
  }
  for (const std::string& dir : wanted) {
    if (watches_.contains(dir)) continue;
    const int watch = ::inotify_add_watch(inotify_fd_, dir.c_str(), IN_MOVED_TO | IN_CREATE);
    // A dir that cannot be watched still has its exit found by the next
    // periodic heartbeat.
    if (watch >= 0) watches_[dir] = watch;
    if (FileExists(dir + "/" + task_files::kExit)) Notify();  // it ended before the watch
  }
}

void Wakeup::Notify() {
  const uint64_t one = 1;
  // Only fails when the counter would overflow: it is set already.
  (void)!::write(event_fd_, &one, sizeof(one));
}

bool Wakeup::DrainExits() {
  bool exited = false;
  alignas(inotify_event) char buffer[4096];
  while (true) {
    const ssize_t length = ::read(inotify_fd_, buffer, sizeof(buffer));
    if (length <= 0) return exited;  // EAGAIN: nothing more
    for (ssize_t offset = 0; offset < length;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + offset);
      if (event->len > 0 && std::strcmp(event->name, task_files::kExit) == 0) exited = true;
      offset += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
    }
  }
}

bool Wakeup::Wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {event_fd_, POLLIN, 0}};
    const int ready = ::poll(fds, 2, static_cast<int>(std::max<int64_t>(left.count(), 0)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;  // timed out (or poll failed: wait no more)
    bool woken = false;
    if ((fds[1].revents & POLLIN) != 0) {
      uint64_t count = 0;
      woken = ::read(event_fd_, &count, sizeof(count)) == sizeof(count);
    }
    // Other files of a task dir (the log, a stop request) come and go
    // without a wake-up.
    if ((fds[0].revents & POLLIN) != 0 && DrainExits()) woken = true;
    if (woken) return true;
  }
}

}  // namespace berth::agent
