// The server's wake calls to agents, over real HTTP on loopback: an agent
// stand-in records what reaches it.
#include "server/agent_waker.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <mutex>
#include <thread>
#include <vector>

#include "server/api_test_fixture.h"

namespace berth::server {
namespace {

using api_testing::ApiTest;
using api_testing::Client;
using api_testing::json;

// Answers POST /wake with 204 and remembers each call's Authorization.
class FakeAgent {
 public:
  FakeAgent() {
    server_.Post("/wake", [this](const httplib::Request& request, httplib::Response& response) {
      std::lock_guard lock(mutex_);
      calls_.push_back(request.get_header_value("Authorization"));
      response.status = 204;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeAgent() {
    server_.stop();
    thread_.join();
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  size_t calls() {
    std::lock_guard lock(mutex_);
    return calls_.size();
  }
  // Waits until at least `count` calls came; all of them.
  std::vector<std::string> WaitForCalls(size_t count) {
    for (int i = 0; i < 500 && calls() < count; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<std::string> calls_;
};

TEST(AgentWakerTest, CallsTheAgentWithItsKey) {
  FakeAgent agent;
  AgentWaker waker(AgentWaker::Options{});
  waker.Wake(AgentEndpoint{"n0", agent.address(), "k3y"});
  EXPECT_EQ(agent.WaitForCalls(1), std::vector<std::string>{"Bearer k3y"});
  for (int i = 0; i < 500 && waker.stats().sent == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(waker.stats().sent, 1);
  EXPECT_EQ(waker.stats().failed, 0);
}

TEST(AgentWakerTest, AnAgentWithoutAnAddressIsNotCalledAndAGoneOneIsCountedAsFailed) {
  AgentWaker waker(AgentWaker::Options{});
  waker.Wake(AgentEndpoint{"n0", "", "k3y"});
  std::string gone;
  {
    FakeAgent stopped;  // its port is closed again at the end of the block
    gone = stopped.address();
  }
  waker.Wake(AgentEndpoint{"n1", gone, "k3y"});
  for (int i = 0; i < 500 && waker.stats().failed == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(waker.stats().failed, 1);
  EXPECT_EQ(waker.stats().sent, 0);
}

// The server wakes a node's agent when a job is placed there and when a
// running job there is cancelled, with the key the agent registered.
TEST_F(ApiTest, TheServerWakesTheAgentOfANodeWithNewWork) {
  FakeAgent fake;
  Client agent = As(NewToken("agent-n0", "agent", "n0"));
  NodeRegistration registration;
  registration.node = "n0";
  registration.address = fake.address();
  registration.logs_key = "s3cret";
  registration.gpus = {GpuReport{0, 0, true}};
  ASSERT_EQ(agent.Post("/api/v1/agent/register", protocol::RegistrationJson(registration)).status,
            200);
  EXPECT_EQ(fake.calls(), 0u);

  Client alice = As(NewToken("alice", "user"));
  const int64_t id = alice.Post("/api/v1/jobs", json{{"command", {"x"}}}).body["id"];
  EXPECT_EQ(fake.WaitForCalls(1), std::vector<std::string>{"Bearer s3cret"}) << "placed";
  const json task = WaitForAssignment(agent, "n0", id);
  Heartbeat(agent, "n0", Running(id, task["attempt"].get<int32_t>()));
  WaitForState(alice, id, "running");
  ASSERT_EQ(alice.Post("/api/v1/jobs/" + std::to_string(id) + "/cancel").status, 200);
  EXPECT_EQ(fake.WaitForCalls(2).size(), 2u) << "cancelled while running";
}

}  // namespace
}  // namespace berth::server
