// A job's runs on agents, end to end over real HTTP on loopback: a task
// that runs and exits, fails or is killed at its limits; a node that falls
// silent, is drained or outlives a server restart. The fixture's clients
// play the agents (api_test_fixture.h).
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "server/api_test_fixture.h"
#include "server/master_port.h"
#include "store/sqlite_store.h"

namespace berth::server::api_testing {
namespace {

TEST_F(ApiTest, AJobRunsOnAnAgentAndSucceeds) {
  Client alice = As(NewToken("alice", "user"));
  Client agent = RegisterAgent("n0", 8);
  const int64_t id =
      alice.Post("/api/v1/jobs", json{{"command", {"train.py"}}, {"gpus", 2}}).body["id"];
  json task = WaitForAssignment(agent, "n0", id);
  EXPECT_EQ(task["command"], json({"train.py"}));
  EXPECT_EQ(task["gpus"].size(), 2u);
  EXPECT_EQ(WaitForState(alice, id, "starting")["placement"][0]["node"], "n0");

  const int32_t attempt = task["attempt"];
  Heartbeat(agent, "n0", Running(id, attempt));
  WaitForState(alice, id, "running");
  Heartbeat(agent, "n0", {TaskReport{core::JobId{id}, 0, attempt, TaskPhase::kExited, 0, {}}});
  json done = WaitForState(alice, id, "succeeded");
  EXPECT_EQ(done["exit_code"], 0);
  EXPECT_EQ(done["placement"][0]["node"], "n0") << "where it ran (and where its logs are)";

  json nodes = alice.Get("/api/v1/nodes").body["nodes"];
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0]["gpus"].size(), 8u);
  const std::string metrics = ScrapeMetrics();
  EXPECT_THAT(metrics, HasSubstr("berth_gpus{node=\"n0\",gpu_type=\"H100\",kind=\"total\"} 8"));
  EXPECT_THAT(metrics, HasSubstr("berth_api_requests_total"));
  EXPECT_THAT(metrics, HasSubstr("berth_scheduler_cycle_seconds_bucket"));
  // The cycle that started the job stored its start.
  for (const char* part : {"queued", "decide", "persist", "apply", "lock_wait"}) {
    EXPECT_THAT(metrics, HasSubstr(std::string("berth_scheduler_cycle_part_seconds_count{part=\"") +
                                   part + "\"}"));
  }
  // And the store's writer committed it.
  for (const char* store_metric :
       {"berth_store_write_wait_seconds_count", "berth_store_transaction_seconds_count",
        "berth_store_transaction_writes_count"}) {
    EXPECT_THAT(metrics, HasSubstr(store_metric));
  }
}

TEST_F(ApiTest, AFailedTaskFailsTheJobAfterItsRetries) {
  Client alice = As(NewToken("alice", "user"));
  Client agent = RegisterAgent("n0", 8);
  const int64_t id =
      alice.Post("/api/v1/jobs", json{{"command", {"false"}}, {"retries", 1}}).body["id"];
  for (int attempt = 1; attempt <= 2; ++attempt) {
    json task = WaitForAssignment(agent, "n0", id);
    ASSERT_EQ(task["attempt"], attempt);
    Heartbeat(agent, "n0", {TaskReport{core::JobId{id}, 0, attempt, TaskPhase::kExited, 3, {}}});
  }
  json failed = WaitForState(alice, id, "failed");
  EXPECT_EQ(failed["exit_code"], 3);
  EXPECT_EQ(failed["attempts"], 2);
}

TEST_F(ApiTest, ATaskKilledAtItsLimitsFailsTheJobWithTheNodesWord) {
  Client alice = As(NewToken("alice", "user"));
  Client agent = RegisterAgent("n0", 8);
  const int64_t oom = alice.Post("/api/v1/jobs", json{{"command", {"big"}}}).body["id"];
  const int64_t late = alice.Post("/api/v1/jobs", json{{"command", {"slow"}}}).body["id"];
  const int32_t oom_attempt = WaitForAssignment(agent, "n0", oom)["attempt"];
  const int32_t late_attempt = WaitForAssignment(agent, "n0", late)["attempt"];
  Heartbeat(agent, "n0",
            {TaskReport{core::JobId{oom},
                        0,
                        oom_attempt,
                        TaskPhase::kExited,
                        {},
                        9,
                        TaskOutcome::kOutOfMemory,
                        "out of memory: limit 64 MiB"},
             // It caught SIGTERM and exited 0: still a run cut short.
             TaskReport{core::JobId{late},
                        0,
                        late_attempt,
                        TaskPhase::kExited,
                        0,
                        {},
                        TaskOutcome::kTimeLimit,
                        "time limit of 40 s reached"}});
  json killed = WaitForState(alice, oom, "failed");
  EXPECT_EQ(killed["reason"], "out_of_memory");
  EXPECT_EQ(killed["message"], "out of memory: limit 64 MiB");
  EXPECT_EQ(killed["signal"], 9);
  // Issue 29: a state of its own, Slurm's TIMEOUT.
  json timed_out = WaitForState(alice, late, "timeout");
  EXPECT_EQ(timed_out["reason"], "time_limit");
  EXPECT_EQ(timed_out["message"], "time limit of 40 s reached");
}

TEST_F(ApiTest, ASilentNodeGoesDownAndItsJobIsRequeuedAndFenced) {
  Client alice = As(NewToken("alice", "user"));
  Client n0 = RegisterAgent("n0", 8);
  const int64_t id = alice.Post("/api/v1/jobs", json{{"command", {"x"}}, {"gpus", 4}}).body["id"];
  // Work that must not run twice: it fails with its node, retries or not.
  const int64_t once =
      alice
          .Post("/api/v1/jobs",
                json{{"command", {"y"}}, {"gpus", 4}, {"requeue", false}, {"retries", 2}})
          .body["id"];
  json first = WaitForAssignment(n0, "n0", id);
  json first_once = WaitForAssignment(n0, "n0", once);
  Heartbeat(
      n0, "n0",
      {TaskReport{core::JobId{id}, 0, first["attempt"].get<int32_t>(), TaskPhase::kRunning, {}, {}},
       TaskReport{core::JobId{once},
                  0,
                  first_once["attempt"].get<int32_t>(),
                  TaskPhase::kRunning,
                  {},
                  {}}});
  WaitForState(alice, id, "running");

  Client n1 = RegisterAgent("n1", 8);
  clock_.Advance(core::Duration::Seconds(20));
  Heartbeat(n1, "n1", {});
  // n0 silent for 50 s > its 30 s lease + the 10 s margin.
  clock_.Advance(core::Duration::Seconds(30));
  json second = WaitForAssignment(n1, "n1", id);
  EXPECT_GT(second["attempt"].get<int>(), first["attempt"].get<int>());
  EXPECT_EQ(alice.Get("/api/v1/nodes").body["nodes"][0]["state"], "down");
  json failed = WaitForState(alice, once, "failed");
  EXPECT_EQ(failed["reason"], "node_lost");
  EXPECT_EQ(failed["requeue"], false);
  EXPECT_THAT(failed["message"].get<std::string>(), HasSubstr("asked not to be requeued"));

  // n0 comes back still running the old attempt: it is told to stop it.
  Reply back = Heartbeat(n0, "n0", Running(id, first["attempt"].get<int32_t>()));
  ASSERT_EQ(back.status, 200);
  ASSERT_EQ(back.body["stop"].size(), 1u) << back.body.dump();
  EXPECT_EQ(back.body["stop"][0]["job"], id);
  EXPECT_EQ(back.body["stop"][0]["attempt"], first["attempt"]);
}

// A silent node is marked down only once that is stored. Here the store
// refuses n1's (a trigger in the real database file): n0, silent before
// it, still goes down and its job's end is stored; n1 stays up and
// watched, and goes down at the first check after the store takes it.
TEST_F(ApiTest, ASilentNodeWhoseDownTheStoreRefusesIsCheckedAgain) {
  Client alice = As(NewToken("alice", "user"));
  Client n0 = RegisterAgent("n0", 8);
  // Not requeued: its loss ends it, so the record the check writes is its last.
  const int64_t id =
      alice.Post("/api/v1/jobs", json{{"command", {"x"}}, {"gpus", 8}, {"requeue", false}})
          .body["id"];
  json first = WaitForAssignment(n0, "n0", id);
  Client n1 = RegisterAgent("n1", 8);
  Heartbeat(n0, "n0", Running(id, first["attempt"].get<int32_t>()));
  WaitForState(alice, id, "running");
  Heartbeat(n1, "n1", {});  // heard after n0: checked after it

  Result<std::unique_ptr<store::SqliteConnection>> raw =
      store::SqliteConnection::Open(dir_.path() + "/berth.sqlite");
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  ASSERT_TRUE((*raw)
                  ->Exec("CREATE TRIGGER refuse_n1 BEFORE UPDATE ON nodes WHEN new.name = 'n1'"
                         " BEGIN SELECT RAISE(ABORT, 'refused by the test'); END",
                         {})
                  .ok());
  auto node_state = [&](const std::string& name) {
    const Reply nodes = Admin().Get("/api/v1/nodes");
    for (const json& node : nodes.body["nodes"]) {
      if (node["name"] == name) return node["state"].get<std::string>();
    }
    return std::string("missing");
  };
  auto stored_state = [&] {
    Result<std::vector<store::SqlRow>> rows =
        (*raw)->Exec("SELECT state FROM jobs WHERE id = $1", {id});
    return rows.ok() && !rows->empty() ? rows->at(0).at(0).value_or("") : std::string("?");
  };
  // What `read` says once it says `want`, or after 3 s (the checks run on
  // the scheduler's thread).
  auto eventually = [](const std::function<std::string()>& read, const std::string& want) {
    for (int i = 0; i < 300 && read() != want; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return read();
  };
  auto wait_for_down = [&](const std::string& name) {
    return eventually([&] { return node_state(name); }, "down");
  };

  clock_.Advance(core::Duration::Seconds(50));  // both silent past lease + margin (40 s)
  EXPECT_EQ(wait_for_down("n0"), "down");
  // What n0's loss changed was written although n1's write then failed.
  EXPECT_EQ(eventually(stored_state, "failed"), "failed");
  // Several checks later (a tick is 20 ms), n1 is still up: each failed.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(node_state("n1"), "up");

  ASSERT_TRUE((*raw)->Exec("DROP TRIGGER refuse_n1", {}).ok());
  EXPECT_EQ(wait_for_down("n1"), "down");
}

TEST_F(ApiTest, AdminsDrainNodes) {
  Client alice = As(NewToken("alice", "user"));
  RegisterAgent("n0", 8);
  ASSERT_EQ(Admin().Post("/api/v1/nodes/n0/drain").status, 200);
  const int64_t id = alice.Post("/api/v1/jobs", json{{"command", {"x"}}}).body["id"];
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  json explained = alice.Get("/api/v1/jobs/" + std::to_string(id) + "/explain").body;
  EXPECT_EQ(explained["reason"], "nodes_unavailable");
  EXPECT_EQ(alice.Get("/api/v1/nodes").body["nodes"][0]["state"], "draining");
  EXPECT_EQ(Admin().Post("/api/v1/nodes/n9/drain").status, 404);
}

TEST_F(ApiTest, RestartKeepsJobsAndRunningWorkRunning) {
  Client alice = As(NewToken("alice", "user"));
  const std::string agent_token = NewToken("agent-n0", "agent", "n0");
  Client agent = As(agent_token);
  NodeRegistration registration;
  registration.node = "n0";
  registration.address = "";  // serves nothing: no logs, no wake calls
  for (int i = 0; i < 8; ++i) registration.gpus.push_back(GpuReport{i, 0, true});
  ASSERT_EQ(agent.Post("/api/v1/agent/register", protocol::RegistrationJson(registration)).status,
            200);
  const int64_t running =
      alice.Post("/api/v1/jobs", json{{"command", {"x"}}, {"gpus", 8}}).body["id"];
  const int64_t waiting =
      alice.Post("/api/v1/jobs", json{{"command", {"y"}}, {"gpus", 8}}).body["id"];
  json task = WaitForAssignment(agent, "n0", running);
  Heartbeat(agent, "n0", Running(running, task["attempt"].get<int32_t>()));
  WaitForState(alice, running, "running");

  server_.reset();
  StartServer();
  Client alice_again = As(NewToken("alice2", "user"));
  EXPECT_EQ(alice_again.Get("/api/v1/jobs/" + std::to_string(running)).body["state"], "running");
  EXPECT_EQ(alice_again.Get("/api/v1/jobs/" + std::to_string(waiting)).body["state"], "pending");
  Client agent_again = As(agent_token);
  Reply desired = Heartbeat(agent_again, "n0", Running(running, task["attempt"].get<int32_t>()));
  ASSERT_EQ(desired.status, 200);
  EXPECT_TRUE(desired.body["stop"].empty()) << "the running job was not killed by the restart";
}

// Issue 29: MASTER_PORT was a hash of the job id, never checked: jobs whose
// hashes met shared a port on a node. A job gets a port no other live job
// on its task 0's node holds, and keeps it across a server restart. Here
// the running job's stored port is made the next job's preferred one.
TEST_F(ApiTest, TwoJobsOnANodeNeverShareAMasterPort) {
  Client alice = As(NewToken("alice", "user"));
  const std::string agent_token = NewToken("agent-n0", "agent", "n0");
  Client agent = As(agent_token);
  NodeRegistration registration;
  registration.node = "n0";
  registration.address = "";
  for (int i = 0; i < 8; ++i) registration.gpus.push_back(GpuReport{i, 0, true});
  ASSERT_EQ(agent.Post("/api/v1/agent/register", protocol::RegistrationJson(registration)).status,
            200);
  const int64_t first = alice.Post("/api/v1/jobs", json{{"command", {"x"}}}).body["id"];
  json task = WaitForAssignment(agent, "n0", first);
  const int32_t attempt = task["attempt"];
  const int32_t port = task["master_port"];
  Heartbeat(agent, "n0", Running(first, attempt));
  WaitForState(alice, first, "running");
  server_.reset();

  const int32_t wanted = ChooseMasterPort(core::JobId{first + 1}, 1, {});
  Result<std::unique_ptr<store::SqliteConnection>> raw =
      store::SqliteConnection::Open(dir_.path() + "/berth.sqlite");
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  ASSERT_TRUE(
      (*raw)
          ->Exec("UPDATE jobs SET body = replace(body, '\"master_port\":" + std::to_string(port) +
                     "', '\"master_port\":" + std::to_string(wanted) + "') WHERE id = $1",
                 {first})
          .ok());
  raw->reset();

  StartServer();
  Client alice_again = As(NewToken("alice2", "user"));
  Client agent_again = As(agent_token);
  const int64_t second = alice_again.Post("/api/v1/jobs", json{{"command", {"y"}}}).body["id"];
  ASSERT_EQ(second, first + 1);
  json desired;
  for (int i = 0; i < 300 && desired["run"].size() != 2; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    desired = Heartbeat(agent_again, "n0", Running(first, attempt)).body;
  }
  ASSERT_EQ(desired["run"].size(), 2u) << desired.dump();
  std::map<int64_t, int32_t> ports;
  for (const json& run : desired["run"]) ports[run["job"].get<int64_t>()] = run["master_port"];
  EXPECT_EQ(ports[first], wanted) << "the running job keeps its port";
  EXPECT_NE(ports[second], wanted);
  EXPECT_GE(ports[second], kFirstMasterPort);
  EXPECT_LT(ports[second], kEndMasterPort);
}

// A reason word this version does not know (a later version wrote it, and
// the server was rolled back) must not stop it from recovering its jobs:
// the job loads with no reason.
TEST_F(ApiTest, ARestartLoadsAJobWhoseStoredReasonItDoesNotKnow) {
  Client alice = As(NewToken("alice", "user"));
  const int64_t id =
      alice.Post("/api/v1/jobs", json{{"command", {"x"}}, {"hold", true}}).body["id"];
  ASSERT_EQ(alice.Get("/api/v1/jobs/" + std::to_string(id)).body["reason"], "held");
  server_.reset();

  Result<std::unique_ptr<store::SqliteConnection>> raw =
      store::SqliteConnection::Open(dir_.path() + "/berth.sqlite");
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  ASSERT_TRUE((*raw)
                  ->Exec("UPDATE jobs SET body = replace(body, '\"reason\":\"held\"',"
                         " '\"reason\":\"from_a_later_version\"') WHERE id = $1",
                         {id})
                  .ok());
  Result<std::vector<store::SqlRow>> body =
      (*raw)->Exec("SELECT body FROM jobs WHERE id = $1", {id});
  ASSERT_TRUE(body.ok() && !body->empty());
  ASSERT_THAT(body->at(0).at(0).value_or(""), HasSubstr("from_a_later_version"));
  raw->reset();

  StartServer();
  ASSERT_NE(server_, nullptr);
  json job = As(NewToken("alice2", "user")).Get("/api/v1/jobs/" + std::to_string(id)).body;
  EXPECT_EQ(job["state"], "held");
  EXPECT_EQ(job["reason"], "");
}

}  // namespace
}  // namespace berth::server::api_testing
