#include "server/agent_waker.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

namespace berth::server {

AgentWaker::AgentWaker(Options options) : options_(options) {
  for (int i = 0; i < std::max(1, options_.threads); ++i) {
    senders_.emplace_back([this] { Send(); });
  }
}

AgentWaker::~AgentWaker() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (std::thread& sender : senders_) sender.join();
}

void AgentWaker::Wake(const AgentEndpoint& agent) {
  if (agent.address.empty()) return;  // the agent serves no endpoint
  {
    std::lock_guard lock(mutex_);
    queued_.insert_or_assign(agent.node, agent);
  }
  ready_.notify_one();
}

AgentWaker::Stats AgentWaker::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void AgentWaker::Send() {
  std::unique_lock lock(mutex_);
  while (true) {
    ready_.wait(lock, [this] { return stopping_ || !queued_.empty(); });
    if (stopping_) return;
    const AgentEndpoint agent = std::move(queued_.begin()->second);
    queued_.erase(queued_.begin());
    lock.unlock();
    httplib::Client client("http://" + agent.address);
    client.set_connection_timeout(options_.connect_timeout);
    client.set_read_timeout(options_.read_timeout);
    client.set_tcp_nodelay(true);
    const httplib::Result result =
        client.Post("/wake", {{"Authorization", "Bearer " + agent.key}}, "", "text/plain");
    const bool ok = result && result->status / 100 == 2;
    if (!ok) {
      // Not an error worth more: the agent's next heartbeat comes anyway.
      spdlog::debug(
          "wake of node {} at {} failed: {}", agent.node, agent.address,
          result ? "HTTP " + std::to_string(result->status) : httplib::to_string(result.error()));
    }
    lock.lock();
    ++(ok ? stats_.sent : stats_.failed);
  }
}

}  // namespace berth::server
