// Wakeup: what ends the agent loop's wait between two heartbeats early.
//
//   - a task exits: its supervisor renames exit.json into the task's dir,
//     and an inotify watch on every running task's dir sees it, so the
//     server hears of the exit (and can give the GPUs to the next job) at
//     once, not at the next heartbeat;
//   - Notify(): the server's wake call (POST /wake: new work for this
//     node), or Stop().
//
// Notifications are counted, not lost: one that comes while the loop is in
// a heartbeat ends the next wait at once. Linux only (inotify, eventfd), as
// the agent is.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace berth::agent {

class Wakeup {
 public:
  static Result<std::unique_ptr<Wakeup>> Create();
  ~Wakeup();
  Wakeup(const Wakeup&) = delete;
  Wakeup& operator=(const Wakeup&) = delete;

  // Watches exactly these task dirs for exit.json (the running tasks';
  // dirs no longer listed are unwatched). A dir that already holds its exit
  // when it is first watched (it exited before the watch) counts as a
  // wake-up. The loop thread only.
  void WatchTaskDirs(const std::vector<std::string>& dirs);
  // Ends the current or next Wait. Any thread.
  void Notify();
  // Waits up to `timeout` for an exit or a Notify(); true when woken, false
  // when the time ran out. The loop thread only.
  bool Wait(std::chrono::milliseconds timeout);

 private:
  Wakeup(int inotify_fd, int event_fd) : inotify_fd_(inotify_fd), event_fd_(event_fd) {}
  // Reads what is pending on the inotify fd; true if an exit.json arrived.
  bool DrainExits();

  int inotify_fd_;
  int event_fd_;
  std::map<std::string, int> watches_;  // task dir -> watch descriptor
};

}  // namespace berth::agent
