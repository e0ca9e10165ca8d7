// Fakes for tests of leader-following clients (issue 32): an httplib
// server on a free loopback port whose every request gets one answer, and
// the answers of a leader and of a standby that names one.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "follow/leader_follower.h"

namespace berth::follow::testing {

class FakeServer {
 public:
  using Answer = std::function<void(httplib::Response&)>;

  explicit FakeServer(Answer answer) {
    auto handle = [this, answer](const httplib::Request&, httplib::Response& response) {
      ++calls_;
      answer(response);
    };
    server_.Get(".*", handle);
    server_.Post(".*", handle);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeServer() {
    server_.stop();
    thread_.join();
  }
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int calls() const { return calls_; }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::atomic<int> calls_{0};
  std::thread thread_;
};

// A leader's answer: 200 and a small JSON body.
inline void Leader(httplib::Response& response) {
  response.set_content(R"({"ok":true})", "application/json");
}

// A standby's answer: 503, naming `leader` in X-Berth-Leader unless empty.
inline FakeServer::Answer StandbyOf(const std::string& leader) {
  return [leader](httplib::Response& response) {
    response.status = 503;
    if (!leader.empty()) response.set_header(kLeaderHeader, leader);
    response.set_content(
        R"({"error":{"code":"unavailable","message":"standby: the leader is )" + leader + "\"}}",
        "application/json");
  };
}

}  // namespace berth::follow::testing
