// Simulated agents: many nodes in one process that speak the agent protocol
// to a real server over loopback HTTP (register, then heartbeats carrying
// their tasks; the answer is the desired state), exactly as `berth agent`
// does, but "run" a task by remembering it until its time is up instead of
// launching a process. A task of `command: ["sleep", "S"]` lasts S seconds.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace httplib {
class Client;
}

namespace berth::bench {

struct FleetOptions {
  int port = 0;  // the server, on 127.0.0.1
  int nodes = 0;
  int gpus_per_node = 8;
  std::string gpu_type = "H100-80GB";
  std::chrono::milliseconds heartbeat_interval{1000};
  int threads = 4;  // each with one kept-alive connection
};

class SimFleet {
 public:
  using Clock = std::chrono::steady_clock;

  // `tokens[i]` is the agent token of node i (named NodeName(i)).
  SimFleet(FleetOptions options, std::vector<std::string> tokens);
  ~SimFleet();
  SimFleet(const SimFleet&) = delete;
  SimFleet& operator=(const SimFleet&) = delete;

  static std::string NodeName(int index);

  // Registers every node, then heartbeats each one every interval (the
  // first round staggered over one interval) until Stop.
  void Start();
  void Stop();

  // Tasks first seen in a desired state (a start reaching its node).
  int64_t starts() const { return starts_.load(); }
  int64_t exits() const { return exits_.load(); }
  int64_t busy_gpus() const { return busy_gpus_.load(); }
  int64_t heartbeats() const { return heartbeats_.load(); }
  int64_t failures() const { return failures_.load(); }
  int registered() const { return registered_.load(); }
  Clock::time_point last_start() const {
    return Clock::time_point(Clock::duration(last_start_.load()));
  }

 private:
  struct Task;
  struct Node;
  void Run(int thread);
  void Heartbeat(Node& node, httplib::Client& client);

  FleetOptions options_;
  std::vector<std::string> tokens_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> starts_{0};
  std::atomic<int64_t> exits_{0};
  std::atomic<int64_t> busy_gpus_{0};
  std::atomic<int64_t> heartbeats_{0};
  std::atomic<int64_t> failures_{0};
  std::atomic<int> registered_{0};
  std::atomic<Clock::rep> last_start_{0};
};

}  // namespace berth::bench
