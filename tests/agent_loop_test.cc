// The agent against a real server on loopback: registration, heartbeats,
// jobs run to their end, logs served, a server that comes up late, several
// servers of which one leads (issue 32).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "agent/agent.h"
#include "agent/fake_gpus.h"
#include "agent/testing/test_util.h"
#include "common/testing/free_port.h"
#include "common/unix_account.h"
#include "follow/testing/fake_server.h"
#include "server/server.h"

namespace berth::agent {
namespace {

using test_support::FreePort;

using nlohmann::json;
using testing::Slurp;
using testing::TempDir;
using testing::WaitFor;

class AgentLoopTest : public ::testing::Test {
 protected:
  void StartServer(int port = 0, core::Duration heartbeat_timeout = core::Duration::Seconds(30)) {
    server::ServerOptions options;
    options.controller.heartbeat_timeout = heartbeat_timeout;  // the node lease
    options.data_dir = server_dir_.path();
    options.listen = "127.0.0.1:" + std::to_string(port);
    options.tick = std::chrono::milliseconds(50);
    options.coalesce = std::chrono::milliseconds(1);
    options.admin_user = EffectiveUserName();  // its jobs run here, as berth dev's do
    server_ = server::Server::Start(std::move(options), clock_).value();
    admin_ = Slurp(server_dir_.path() + "/admin-token");
    admin_.pop_back();  // the newline
  }

  std::string Token(const json& body) {
    httplib::Client client("127.0.0.1", server_->port());
    client.set_bearer_token_auth(admin_);
    httplib::Result reply = client.Post("/api/v1/tokens", body.dump(), "application/json");
    EXPECT_TRUE(reply && reply->status == 201) << (reply ? reply->body : "no reply");
    return json::parse(reply->body).at("token").get<std::string>();
  }

  AgentOptions Options(const std::string& token, int server_port) {
    AgentOptions options;
    options.server_url = "http://127.0.0.1:" + std::to_string(server_port);
    options.token = token;
    options.node = "node-1";
    options.state_dir = agent_dir_.path();
    options.heartbeat_interval = std::chrono::milliseconds(100);
    options.max_backoff = std::chrono::milliseconds(200);
    options.supervisor_command = {"/proc/self/exe", "supervise-task"};
    options.allow_root_jobs = true;
    // The loop, not the fence: cgroups are agent_test's and cgroups_e2e's
    // (and agents that leave tasks running would leave their cgroups' parent).
    options.cgroups = CgroupMode::kOff;
    return options;
  }

  std::unique_ptr<Agent> StartAgent(AgentOptions options) {
    auto inventory = std::make_unique<FakeGpuInventory>(ParseFakeGpus("4xH100-80GB").value());
    Result<std::unique_ptr<Agent>> agent =
        Agent::Start(std::move(options), std::move(inventory), clock_);
    EXPECT_TRUE(agent.ok()) << agent.status().ToString();
    return agent.ok() ? std::move(*agent) : nullptr;
  }

  int64_t Submit(const std::string& token, const json& body) {
    httplib::Client client("127.0.0.1", server_->port());
    client.set_bearer_token_auth(token);
    httplib::Result reply = client.Post("/api/v1/jobs", body.dump(), "application/json");
    EXPECT_TRUE(reply && reply->status == 201) << (reply ? reply->body : "no reply");
    return json::parse(reply->body).at("id").get<int64_t>();
  }

  json Job(int64_t id) {
    httplib::Client client("127.0.0.1", server_->port());
    client.set_bearer_token_auth(admin_);
    httplib::Result reply = client.Get("/api/v1/jobs/" + std::to_string(id));
    return reply && reply->status == 200 ? json::parse(reply->body) : json();
  }

  bool WaitForState(int64_t id, const std::string& state) {
    return WaitFor([&] {
      const json job = Job(id);
      return job.is_object() && job.value("state", "") == state;
    });
  }

  std::string LogsKey() {
    Result<std::vector<server::NodeView>> nodes =
        server_->controller().ListNodes(server::Principal{"admin", store::Role::kAdmin, ""});
    if (!nodes.ok()) return "";
    const std::vector<server::NodeView>& views = *nodes;
    for (size_t i = 0; i < views.size(); ++i) {
      if (views[i].record.name == "node-1") return views[i].record.logs_key;
    }
    return "";
  }

  const SystemClock clock_;
  TempDir server_dir_;
  TempDir agent_dir_;
  std::unique_ptr<server::Server> server_;
  std::string admin_;
};

TEST_F(AgentLoopTest, RunsAJobToItsEndAndServesItsLog) {
  StartServer();
  const std::string agent_token =
      Token({{"user", "agent-1"}, {"role", "agent"}, {"node", "node-1"}});
  // Its tasks run as the account of whoever runs the test (root in CI).
  const std::string alice = Token({{"user", EffectiveUserName()}, {"role", "user"}});
  std::unique_ptr<Agent> agent = StartAgent(Options(agent_token, server_->port()));
  ASSERT_NE(agent, nullptr);
  ASSERT_TRUE(WaitFor([&] { return agent->stats().heartbeats_ok > 0; }));

  const int64_t ok = Submit(
      alice, {{"command", {"sh", "-c", "echo \"gpus=$CUDA_VISIBLE_DEVICES\""}}, {"gpus", 2}});
  const int64_t bad = Submit(alice, {{"command", {"sh", "-c", "exit 3"}}, {"gpus", 1}});
  ASSERT_TRUE(WaitForState(ok, "succeeded"));
  ASSERT_TRUE(WaitForState(bad, "failed"));
  EXPECT_EQ(Job(ok).value("exit_code", -1), 0);
  EXPECT_EQ(Job(bad).value("exit_code", -1), 3);

  // The log, as the server will fetch it.
  httplib::Client client("127.0.0.1",
                         std::stoi(agent->address().substr(agent->address().rfind(':') + 1)));
  httplib::Result log = client.Get("/logs?job=" + std::to_string(ok) + "&task=0",
                                   {{"Authorization", "Bearer " + LogsKey()}});
  ASSERT_TRUE(log);
  EXPECT_EQ(log->status, 200);
  EXPECT_THAT(log->body, ::testing::MatchesRegex("gpus=[0-3],[0-3]\n"));
  EXPECT_EQ(log->get_header_value("X-Berth-Task-Running"), "0");
  // Without cgroups (--cgroups off here) the node says its tasks have no limits.
  httplib::Result metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(metrics->body, ::testing::HasSubstr(
                                 "berth_agent_task_cgroups{node=\"node-1\",version=\"off\"} 0\n"));
  // The exits were acknowledged: no longer reported.
  EXPECT_TRUE(WaitFor([&] {
    return std::filesystem::exists(agent_dir_.path() + "/tasks/" + std::to_string(ok) +
                                   "-0-1/acked");
  }));
  agent->Stop();
}

// With heartbeats an hour apart, only the server's wake call can start a
// job or stop a cancelled one, and only the agent's watch on its tasks'
// exits can tell the server that they ended.
TEST_F(AgentLoopTest, WakeCallsAndExitsDoNotWaitForTheHeartbeat) {
  StartServer();
  const std::string agent_token =
      Token({{"user", "agent-1"}, {"role", "agent"}, {"node", "node-1"}});
  AgentOptions options = Options(agent_token, server_->port());
  options.heartbeat_interval = std::chrono::hours(1);
  std::unique_ptr<Agent> agent = StartAgent(std::move(options));
  ASSERT_NE(agent, nullptr);
  ASSERT_TRUE(WaitFor([&] { return agent->stats().heartbeats_ok > 0; }));

  const int64_t quick = Submit(admin_, {{"command", {"true"}}, {"gpus", 1}});
  EXPECT_TRUE(WaitForState(quick, "succeeded"));
  const int64_t endless = Submit(admin_, {{"command", {"sleep", "1000"}}, {"gpus", 1}});
  ASSERT_TRUE(WaitForState(endless, "running"));
  httplib::Client client("127.0.0.1", server_->port());
  client.set_bearer_token_auth(admin_);
  httplib::Result cancelled = client.Post("/api/v1/jobs/" + std::to_string(endless) + "/cancel");
  ASSERT_TRUE(cancelled && cancelled->status / 100 == 2) << (cancelled ? cancelled->body : "");
  EXPECT_TRUE(WaitForState(endless, "cancelled"));
  agent->Stop();
}

// Issue 29: a job cancelled while it runs ends `cancelled` with how its
// task ended (its SIGTERM handler's exit code) and a final message, not
// "stopping"; a job stopped at its time limit ends `timeout`.
TEST_F(AgentLoopTest, ACancelKeepsTheTasksExitAndATimeLimitIsATimeout) {
  StartServer();
  const std::string agent_token =
      Token({{"user", "agent-1"}, {"role", "agent"}, {"node", "node-1"}});
  std::unique_ptr<Agent> agent = StartAgent(Options(agent_token, server_->port()));
  ASSERT_NE(agent, nullptr);
  // The task says when its trap is set: a cancel before that would kill the
  // shell by SIGTERM itself (as it does on a slow machine, under ASan).
  TempDir marks;
  const std::string armed = marks.path() + "/armed";
  const int64_t trapping = Submit(
      admin_,
      {{"command",
        {"sh", "-c", "trap 'exit 7' TERM; touch '" + armed + "'; while true; do sleep 0.05; done"}},
       {"gpus", 1}});
  ASSERT_TRUE(WaitForState(trapping, "running"));
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(armed); }));
  httplib::Client client("127.0.0.1", server_->port());
  client.set_bearer_token_auth(admin_);
  httplib::Result cancelled = client.Post("/api/v1/jobs/" + std::to_string(trapping) + "/cancel");
  ASSERT_TRUE(cancelled && cancelled->status / 100 == 2) << (cancelled ? cancelled->body : "");
  ASSERT_TRUE(WaitForState(trapping, "cancelled"));
  const json ended = Job(trapping);
  EXPECT_EQ(ended["exit_code"], 7) << ended.dump();
  EXPECT_THAT(ended.value("message", ""), ::testing::HasSubstr("cancelled by"));
  EXPECT_THAT(ended.value("message", ""), ::testing::HasSubstr("exited with code 7"));
  EXPECT_THAT(ended.value("message", ""), ::testing::Not(::testing::HasSubstr("stopping")));

  const int64_t limited =
      Submit(admin_, {{"command", {"sleep", "1000"}}, {"gpus", 1}, {"time_limit_s", 1}});
  ASSERT_TRUE(WaitForState(limited, "timeout")) << Job(limited).dump();
  const json timed_out = Job(limited);
  EXPECT_EQ(timed_out["reason"], "time_limit");
  EXPECT_EQ(timed_out["signal"], SIGTERM);
  EXPECT_THAT(timed_out.value("message", ""), ::testing::HasSubstr("time limit"));
  agent->Stop();
}

// Issue 32: an agent cut off from its server stops its tasks once the node
// lease (2 s here) it last renewed has ended: the server will have moved
// their jobs elsewhere by the lease and its margin. The agent says why.
TEST_F(AgentLoopTest, AnAgentCutOffFromItsServerStopsItsTasksWhenItsLeaseEnds) {
  StartServer(0, core::Duration::Seconds(2));
  const std::string agent_token =
      Token({{"user", "agent-1"}, {"role", "agent"}, {"node", "node-1"}});
  std::unique_ptr<Agent> agent = StartAgent(Options(agent_token, server_->port()));
  ASSERT_NE(agent, nullptr);
  const int64_t id = Submit(admin_, {{"command", {"sleep", "1000"}}, {"gpus", 1}});
  ASSERT_TRUE(WaitForState(id, "running"));
  // Heartbeats on, renewing it: the task runs past several leases.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  const std::string exit_file =
      agent_dir_.path() + "/tasks/" + std::to_string(id) + "-0-1/exit.json";
  EXPECT_FALSE(std::filesystem::exists(exit_file));

  const auto cut = std::chrono::steady_clock::now();
  server_->Stop();
  server_.reset();
  ASSERT_TRUE(
      WaitFor([&] { return std::filesystem::exists(exit_file); }, std::chrono::seconds(20)));
  const auto took = std::chrono::steady_clock::now() - cut;
  EXPECT_THAT(Slurp(exit_file), ::testing::HasSubstr("\"reason\":\"lease_expired\""));
  EXPECT_GE(agent->stats().tasks_fenced, 1);
  // Within the lease and what the node promises after it (8 s).
  EXPECT_LT(took, std::chrono::seconds(2 + 8));
  agent->Stop();
}

TEST_F(AgentLoopTest, KeepsTryingUntilTheServerComesUp) {
  const int port = FreePort();
  // The token is made by a server on the same data dir, which then stops.
  StartServer(port);
  const std::string agent_token =
      Token({{"user", "agent-1"}, {"role", "agent"}, {"node", "node-1"}});
  server_->Stop();
  server_.reset();

  std::unique_ptr<Agent> agent = StartAgent(Options(agent_token, port));
  ASSERT_NE(agent, nullptr);
  ASSERT_TRUE(WaitFor([&] { return agent->stats().heartbeats_failed >= 2; }));
  EXPECT_EQ(agent->stats().registrations, 0);
  StartServer(port);
  ASSERT_TRUE(WaitFor([&] { return agent->stats().heartbeats_ok > 0; }));
  EXPECT_EQ(agent->stats().registrations, 1);
  agent->Stop();
}

// Issue 32: --server DEAD,STANDBY, where the standby names a leader that is
// not in the list: the agent registers with the leader and heartbeats there.
TEST_F(AgentLoopTest, FollowsAStandbyToTheLeaderPastADeadAddress) {
  StartServer();
  const std::string agent_token =
      Token({{"user", "agent-1"}, {"role", "agent"}, {"node", "node-1"}});
  follow::testing::FakeServer standby(
      follow::testing::StandbyOf("http://127.0.0.1:" + std::to_string(server_->port())));
  AgentOptions options = Options(agent_token, 0);
  options.server_url = "http://127.0.0.1:" + std::to_string(FreePort()) + "," + standby.url();
  std::unique_ptr<Agent> agent = StartAgent(std::move(options));
  ASSERT_NE(agent, nullptr);
  ASSERT_TRUE(WaitFor([&] { return agent->stats().heartbeats_ok >= 3; }));
  EXPECT_EQ(agent->stats().registrations, 1);
  EXPECT_EQ(agent->stats().heartbeats_failed, 0);  // every request found the leader at once
  EXPECT_EQ(standby.calls(), 1);                   // then it stayed with the leader
  agent->Stop();
}

// Issue 32: the leader goes and the next address takes over (here the same
// data dir on another port): the agent moves there and goes on.
TEST_F(AgentLoopTest, MovesToTheNextServerWhenItsServerGoes) {
  const int first = FreePort();
  const int second = FreePort();
  StartServer(first);
  const std::string agent_token =
      Token({{"user", "agent-1"}, {"role", "agent"}, {"node", "node-1"}});
  AgentOptions options = Options(agent_token, first);
  options.server_url += ",http://127.0.0.1:" + std::to_string(second);
  std::unique_ptr<Agent> agent = StartAgent(std::move(options));
  ASSERT_NE(agent, nullptr);
  ASSERT_TRUE(WaitFor([&] { return agent->stats().heartbeats_ok >= 2; }));
  server_->Stop();
  server_.reset();
  StartServer(second);
  const int64_t before = agent->stats().heartbeats_ok;
  ASSERT_TRUE(WaitFor([&] { return agent->stats().heartbeats_ok >= before + 3; }));
  agent->Stop();
}

TEST_F(AgentLoopTest, TasksKeepRunningWhileTheServerRestarts) {
  const int port = FreePort();
  StartServer(port);
  const std::string agent_token =
      Token({{"user", "agent-1"}, {"role", "agent"}, {"node", "node-1"}});
  std::unique_ptr<Agent> agent = StartAgent(Options(agent_token, port));
  ASSERT_NE(agent, nullptr);
  const int64_t job = Submit(
      admin_,
      {{"command", {"sh", "-c", "while [ ! -e \"$BERTH_TASK_DIR/go\" ]; do sleep 0.02; done"}},
       {"gpus", 1}});
  ASSERT_TRUE(WaitForState(job, "running"));
  const std::string task_dir = agent_dir_.path() + "/tasks/" + std::to_string(job) + "-0-1";

  server_->Stop();
  server_.reset();
  const int64_t failed = agent->stats().heartbeats_failed;
  ASSERT_TRUE(WaitFor([&] { return agent->stats().heartbeats_failed >= failed + 2; }));
  EXPECT_FALSE(std::filesystem::exists(task_dir + "/exit.json"));  // still running

  StartServer(port);  // the same data dir: the job is still placed on node-1
  std::ofstream(task_dir + "/work/go") << "go";  // $BERTH_TASK_DIR
  ASSERT_TRUE(WaitForState(job, "succeeded"));
  EXPECT_EQ(Job(job).value("attempts", 0), 1);  // the same run, never restarted
  agent->Stop();
}

TEST_F(AgentLoopTest, StopTasksOnExitStopsThem) {
  StartServer();
  const std::string agent_token =
      Token({{"user", "agent-1"}, {"role", "agent"}, {"node", "node-1"}});
  AgentOptions options = Options(agent_token, server_->port());
  options.stop_tasks_on_exit = true;
  options.exit_grace = core::Duration::Millis(200);
  std::unique_ptr<Agent> agent = StartAgent(std::move(options));
  ASSERT_NE(agent, nullptr);
  const int64_t job = Submit(
      admin_,
      {{"command", {"sh", "-c", "trap '' TERM; touch \"$BERTH_TASK_DIR/deaf\"; exec sleep 1000"}},
       {"gpus", 1}});
  ASSERT_TRUE(WaitForState(job, "running"));
  // Running as soon as its process exists: wait until it ignores SIGTERM.
  ASSERT_TRUE(WaitFor([&] {
    return std::filesystem::exists(agent_dir_.path() + "/tasks/" + std::to_string(job) +
                                   "-0-1/work/deaf");
  }));
  agent->Stop();  // returns once the task is gone (SIGKILL after 200 ms)
  const std::string exit_path =
      agent_dir_.path() + "/tasks/" + std::to_string(job) + "-0-1/exit.json";
  EXPECT_THAT(Slurp(exit_path), ::testing::HasSubstr("\"signal\":9"));
}

TEST_F(AgentLoopTest, OneAgentPerStateDir) {
  StartServer();
  const std::string agent_token =
      Token({{"user", "agent-1"}, {"role", "agent"}, {"node", "node-1"}});
  std::unique_ptr<Agent> first = StartAgent(Options(agent_token, server_->port()));
  ASSERT_NE(first, nullptr);
  Result<std::unique_ptr<Agent>> second = Agent::Start(
      Options(agent_token, server_->port()),
      std::make_unique<FakeGpuInventory>(ParseFakeGpus("4xH100-80GB").value()), clock_);
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.status().message(), ::testing::HasSubstr("in use by another agent"));
  first->Stop();
}

}  // namespace
}  // namespace berth::agent
