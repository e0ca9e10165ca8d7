// The fixture of the HTTP API tests: a real server (SQLite file in a temp
// dir) on loopback, and httplib clients playing users, admins and agents.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "common/clock.h"
#include "common/testing/temp_dir.h"
#include "protocol/report_json.h"
#include "server/api_json.h"
#include "server/server.h"

namespace berth::server::api_testing {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using test_support::TempDir;

struct Reply {
  int status = 0;
  json body;
};

class Client {
 public:
  Client(int port, std::string token) : client_("127.0.0.1", port), token_(std::move(token)) {
    client_.set_read_timeout(10, 0);
  }
  Reply Get(const std::string& path) { return Wrap(client_.Get(path, Headers())); }
  Reply Post(const std::string& path, const json& body = json::object()) {
    return Wrap(client_.Post(path, Headers(), body.dump(), "application/json"));
  }
  Reply PostRaw(const std::string& path, const std::string& body) {
    return Wrap(client_.Post(path, Headers(), body, "application/json"));
  }
  Reply Put(const std::string& path, const json& body) {
    return Wrap(client_.Put(path, Headers(), body.dump(), "application/json"));
  }
  Reply Patch(const std::string& path, const json& body) {
    return Wrap(client_.Patch(path, Headers(), body.dump(), "application/json"));
  }
  Reply Delete(const std::string& path) { return Wrap(client_.Delete(path, Headers())); }

 private:
  httplib::Headers Headers() const {
    if (token_.empty()) return {};
    return {{"Authorization", "Bearer " + token_}};
  }
  static Reply Wrap(const httplib::Result& result) {
    if (!result) return Reply{-1, json()};
    return Reply{result->status, json::parse(result->body, nullptr, false)};
  }
  httplib::Client client_;
  std::string token_;
};

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(); }
  void TearDown() override { server_.reset(); }

  void StartServer() {
    ServerOptions options;
    options.data_dir = dir_.path();
    options.listen = "127.0.0.1:0";
    options.tick = tick_;
    options.coalesce = std::chrono::milliseconds(1);
    options.controller.heartbeat_timeout = heartbeat_timeout_;
    options.controller.policy = policy_;
    options.controller.ended_kept = ended_kept_;
    options.controller.queue_depth = queue_depth_;
    options.controller.wait_for_nodes = wait_for_nodes_;
    options.public_metrics = public_metrics_;
    Result<std::unique_ptr<Server>> started = Server::Start(options, clock_);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    server_ = std::move(*started);
    std::ifstream in(dir_.path() + "/admin-token");
    std::string token;
    std::getline(in, token);
    if (!token.empty()) admin_token_ = token;
  }

  Client As(const std::string& token) { return Client(server_->port(), token); }
  Client Admin() { return As(admin_token_); }

  std::string NewToken(const std::string& user, const std::string& role,
                       const std::string& node = "") {
    json body{{"user", user}, {"role", role}};
    if (!node.empty()) body["node"] = node;
    Reply reply = Admin().Post("/api/v1/tokens", body);
    EXPECT_EQ(reply.status, 201) << reply.body.dump();
    return reply.body.value("token", "");
  }

  // GET /metrics as Prometheus does it: with a metrics token.
  std::string ScrapeMetrics() {
    if (metrics_token_.empty()) metrics_token_ = NewToken("prometheus", "metrics");
    httplib::Client raw("127.0.0.1", server_->port());
    httplib::Result result = raw.Get("/metrics", {{"Authorization", "Bearer " + metrics_token_}});
    EXPECT_TRUE(result && result->status == 200);
    return result ? result->body : "";
  }

  // Registers a node with `gpus` GPUs through its agent's token.
  Client RegisterAgent(const std::string& node, int gpus, std::vector<std::string> features = {},
                       const std::string& gpu_type = "H100") {
    Client agent = As(NewToken("agent-" + node, "agent", node));
    NodeRegistration registration;
    registration.node = node;
    registration.address = "";  // serves nothing: no logs, no wake calls
    registration.gpu_type = gpu_type;
    registration.features = std::move(features);
    for (int i = 0; i < gpus; ++i) registration.gpus.push_back(GpuReport{i, 0, true});
    Reply reply = agent.Post("/api/v1/agent/register", protocol::RegistrationJson(registration));
    EXPECT_EQ(reply.status, 200) << reply.body.dump();
    return agent;
  }

  Reply Heartbeat(Client& agent, const std::string& node, const std::vector<TaskReport>& tasks) {
    return agent.Post("/api/v1/agent/heartbeat",
                      protocol::HeartbeatJson(server::Heartbeat{node, tasks, {}}));
  }

  // An agent's report that task 0 of job `id` runs.
  static std::vector<TaskReport> Running(int64_t id, int32_t attempt) {
    return {TaskReport{core::JobId{id}, 0, attempt, TaskPhase::kRunning, {}, {}}};
  }

  // Moves the fake clock on by `by` in steps well below the heartbeat
  // timeout, heartbeating `tasks` from `node` after each. One big step races
  // the server's tick: a tick between the step and the next heartbeat finds
  // the node silent past the timeout and requeues its jobs.
  void AdvanceWithHeartbeats(Client& agent, const std::string& node, core::Duration by,
                             const std::vector<TaskReport>& tasks) {
    while (by > core::Duration::Zero()) {
      const core::Duration step = core::Min(by, core::Duration::Seconds(10));
      clock_.Advance(step);
      Heartbeat(agent, node, tasks);
      by = by - step;
    }
  }

  // Polls until the job reaches `state` (the scheduler runs on its own thread).
  json WaitForState(Client& client, int64_t id, const std::string& state) {
    json job;
    for (int i = 0; i < 300; ++i) {
      job = client.Get("/api/v1/jobs/" + std::to_string(id)).body;
      if (job.value("state", "") == state) return job;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "job " << id << " never reached " << state << ": " << job.dump();
    return job;
  }

  // Heartbeats (reporting `running`, the tasks already running there) until
  // the desired state runs this job; returns the assignment.
  json WaitForAssignment(Client& agent, const std::string& node, int64_t id,
                         const std::vector<TaskReport>& running = {}) {
    for (int i = 0; i < 300; ++i) {
      Reply reply = Heartbeat(agent, node, running);
      for (const json& task : reply.body["run"]) {
        if (task.value("job", 0) == id) return task;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "job " << id << " was never assigned to " << node;
    return json();
  }

  TempDir dir_;
  std::string policy_ = "fifo";
  std::chrono::milliseconds tick_{20};  // the scheduler's cycle when nothing wakes it
  core::Duration heartbeat_timeout_ = core::Duration::Seconds(30);
  size_t ended_kept_ = ControllerOptions{}.ended_kept;
  size_t queue_depth_ = ControllerOptions{}.queue_depth;
  bool wait_for_nodes_ = false;
  bool public_metrics_ = false;
  ManualClock clock_;
  std::unique_ptr<Server> server_;
  std::string admin_token_;
  std::string metrics_token_;  // made by the first ScrapeMetrics()
};

}  // namespace berth::server::api_testing
