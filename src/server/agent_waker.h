// AgentWaker: tells an agent at once that its node's desired state has
// changed (a task to start or to stop), so it heartbeats now instead of at
// its next interval. Without it a job starts, and a cancelled one stops, up
// to one heartbeat interval late; with it, within milliseconds.
//
//   POST http://ADDRESS/wake     Authorization: Bearer <the node's key>
//
// The call carries nothing: the agent answers 204 and runs a heartbeat
// round, whose answer is the desired state. A lost or refused call (an old
// agent answers 404, a gone one does not answer) costs nothing but the
// delay: the periodic heartbeat still comes. Slurm's controller likewise
// sends RPCs to its slurmds; the heartbeat stays the one channel for state.
//
// Wake() only queues, so it may be called under the controller's lock;
// calls for one node that arrive before it is reached are sent once. A few
// sender threads, so one unreachable node does not hold up the others.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/controller.h"

namespace berth::server {

class AgentWaker {
 public:
  struct Options {
    int threads = 2;
    std::chrono::milliseconds connect_timeout{500};
    std::chrono::milliseconds read_timeout{1000};
  };
  struct Stats {
    int64_t sent = 0;    // answered 2xx
    int64_t failed = 0;  // unreachable, or any other answer
  };

  explicit AgentWaker(Options options);
  ~AgentWaker();  // stops the senders; queued calls are dropped
  AgentWaker(const AgentWaker&) = delete;
  AgentWaker& operator=(const AgentWaker&) = delete;

  void Wake(const AgentEndpoint& agent);
  Stats stats() const;

 private:
  void Send();

  Options options_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::map<std::string, AgentEndpoint> queued_;  // by node
  bool stopping_ = false;
  Stats stats_;
  std::vector<std::thread> senders_;
};

}  // namespace berth::server
