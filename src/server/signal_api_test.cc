// Over the HTTP API (issue 29, item 5): signals sent to a running job reach
// its agent with its tasks, and a requeued job runs again with a higher
// attempt (SLURM_RESTART_COUNT on the node).
#include <signal.h>

#include "server/api_test_fixture.h"

namespace berth::server::api_testing {
namespace {

class SignalApiTest : public ApiTest {
 protected:
  void SetUp() override { StartServer(); }

  // Submits a one-task job and runs it on n0; returns its id and attempt.
  std::pair<int64_t, int32_t> SubmitAndRun(Client& user, Client& agent, const json& extra = {}) {
    json body{{"command", {"x"}}, {"gpus", 1}, {"grace_s", 1}};
    for (const auto& [key, value] : extra.items()) body[key] = value;
    const Reply submitted = user.Post("/api/v1/jobs", body);
    EXPECT_EQ(submitted.status, 201) << submitted.body.dump();
    const int64_t id = submitted.body["id"];
    const int32_t attempt = WaitForAssignment(agent, "n0", id)["attempt"];
    Heartbeat(agent, "n0", Running(id, attempt));
    WaitForState(user, id, "running");
    return {id, attempt};
  }

  static json RunEntry(const Reply& reply, int64_t id) {
    for (const json& task : reply.body["run"]) {
      if (task.value("job", 0) == id) return task;
    }
    return json();
  }
};

TEST_F(SignalApiTest, ASignalReachesTheAgentWithTheRunningTask) {
  Client alice = As(NewToken("alice", "user"));
  Client bob = As(NewToken("bob", "user"));
  Client agent = RegisterAgent("n0", 8);
  const auto [id, attempt] = SubmitAndRun(alice, agent);
  const std::vector<TaskReport> running = Running(id, attempt);
  EXPECT_FALSE(RunEntry(Heartbeat(agent, "n0", running), id).contains("signals"));
  const std::string path = "/api/v1/jobs/" + std::to_string(id) + "/signal";
  EXPECT_EQ(bob.Post(path, json{{"signal", "USR1"}}).status, 403);
  const Reply bad = alice.Post(path, json{{"signal", "USR9"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_THAT(bad.body["error"]["message"].get<std::string>(), ::testing::HasSubstr("signal"));
  ASSERT_EQ(alice.Post(path, json{{"signal", "SIGUSR1"}}).status, 200);
  ASSERT_EQ(alice.Post(path, json{{"signal", "10"}, {"batch_only", true}}).status, 200);
  const json signals = RunEntry(Heartbeat(agent, "n0", running), id)["signals"];
  ASSERT_EQ(signals.size(), 2u) << signals.dump();
  EXPECT_EQ(signals[0]["name"], "USR1");
  EXPECT_EQ(signals[0]["batch_only"], false);
  EXPECT_EQ(signals[1]["batch_only"], true);
  EXPECT_LT(signals[0]["id"].get<int64_t>(), signals[1]["id"].get<int64_t>());
  EXPECT_EQ(alice.Get("/api/v1/jobs/" + std::to_string(id)).body["state"], "running");
}

TEST_F(SignalApiTest, AnAcceptedSignalOutlivesARestartOfTheServer) {
  const std::string token = NewToken("alice", "user");
  Client alice = As(token);
  Client agent = RegisterAgent("n0", 8);
  const auto [id, attempt] = SubmitAndRun(alice, agent);
  ASSERT_EQ(alice
                .Post("/api/v1/jobs/" + std::to_string(id) + "/signal",
                      json{{"signal", "USR1"}, {"batch_only", true}})
                .status,
            200);
  server_.reset();  // before any node heard of it
  StartServer();
  Client again = RegisterAgent("n0", 8);
  const json signals = RunEntry(Heartbeat(again, "n0", Running(id, attempt)), id)["signals"];
  ASSERT_EQ(signals.size(), 1u) << signals.dump();
  EXPECT_EQ(signals[0]["name"], "USR1");
  EXPECT_EQ(signals[0]["batch_only"], true);
  // Sent to that run only: its next run starts with none.
  ASSERT_EQ(As(token).Post("/api/v1/jobs/" + std::to_string(id) + "/requeue").status, 200);
  TaskReport ended{core::JobId{id}, 0, attempt, TaskPhase::kExited, {}, SIGTERM};
  ended.outcome = TaskOutcome::kStopped;
  Heartbeat(again, "n0", {ended});
  WaitForAssignment(again, "n0", id);
  const Reply next = Heartbeat(again, "n0", Running(id, attempt + 1));
  EXPECT_FALSE(RunEntry(next, id).contains("signals")) << next.body.dump();
}

TEST_F(SignalApiTest, OnlyARunningJobCanBeSignalledOrRequeued) {
  Client alice = As(NewToken("alice", "user"));
  const int64_t pending =
      alice.Post("/api/v1/jobs", json{{"command", {"x"}}, {"gpus", 1}}).body["id"];  // no node
  const std::string job = "/api/v1/jobs/" + std::to_string(pending);
  const Reply signal = alice.Post(job + "/signal", json{{"signal", "USR1"}});
  EXPECT_EQ(signal.status, 409);
  EXPECT_THAT(signal.body["error"]["message"].get<std::string>(),
              ::testing::HasSubstr("is not running (state pending)"));
  EXPECT_EQ(alice.Post(job + "/requeue").status, 409);
  EXPECT_EQ(alice.Post("/api/v1/jobs/999/requeue").status, 404);
}

TEST_F(SignalApiTest, ARequeuedJobRunsAgainWithTheNextAttempt) {
  Client alice = As(NewToken("alice", "user"));
  Client bob = As(NewToken("bob", "user"));
  Client agent = RegisterAgent("n0", 8);
  const auto [id, attempt] = SubmitAndRun(alice, agent);
  const std::string path = "/api/v1/jobs/" + std::to_string(id) + "/requeue";
  EXPECT_EQ(bob.Post(path).status, 403);
  ASSERT_EQ(alice.Post(path).status, 200);
  const json stopping = WaitForState(alice, id, "completing");
  EXPECT_EQ(stopping["reason"], "requeued");
  const Reply stop = Heartbeat(agent, "n0", Running(id, attempt));
  ASSERT_EQ(stop.body["stop"].size(), 1u) << stop.body.dump();
  // The task ends of the SIGTERM; the job goes back to the queue and runs again.
  TaskReport ended{core::JobId{id}, 0, attempt, TaskPhase::kExited, {}, SIGTERM};
  ended.outcome = TaskOutcome::kStopped;
  Heartbeat(agent, "n0", {ended});
  const json again = WaitForAssignment(agent, "n0", id);
  EXPECT_EQ(again["attempt"], attempt + 1);
  EXPECT_EQ(alice.Get("/api/v1/jobs/" + std::to_string(id)).body["attempts"], 2);

  // A job that must not run twice is refused.
  const auto [once, once_attempt] = SubmitAndRun(alice, agent, json{{"requeue", false}});
  const Reply refused = alice.Post("/api/v1/jobs/" + std::to_string(once) + "/requeue");
  EXPECT_EQ(refused.status, 409);
  EXPECT_THAT(refused.body["error"]["message"].get<std::string>(),
              ::testing::HasSubstr("requeue false"));
}

TEST_F(SignalApiTest, AnEndedJobIsRequeuedAndRunsAgain) {
  // As Slurm requeues a finished batch job: pending at once, its next run
  // one attempt higher.
  Client alice = As(NewToken("alice", "user"));
  Client bob = As(NewToken("bob", "user"));
  Client agent = RegisterAgent("n0", 8);
  const auto [id, attempt] = SubmitAndRun(alice, agent);
  Heartbeat(agent, "n0", {TaskReport{core::JobId{id}, 0, attempt, TaskPhase::kExited, 3, {}}});
  EXPECT_EQ(WaitForState(alice, id, "failed")["exit_code"], 3);
  const std::string path = "/api/v1/jobs/" + std::to_string(id) + "/requeue";
  EXPECT_EQ(bob.Post(path).status, 403);
  ASSERT_EQ(alice.Post(path).status, 200);
  // Pending, unless the next cycle has already started it again.
  const json requeued = alice.Get("/api/v1/jobs/" + std::to_string(id)).body;
  EXPECT_TRUE(requeued["state"] == "pending" || requeued["state"] == "starting") << requeued.dump();
  if (requeued["state"] == "pending") {
    EXPECT_EQ(requeued["reason"], "requeued");
  }
  EXPECT_TRUE(requeued["exit_code"].is_null()) << requeued.dump();
  EXPECT_TRUE(requeued["end_time"].is_null()) << requeued.dump();
  const json again = WaitForAssignment(agent, "n0", id);
  EXPECT_EQ(again["attempt"], attempt + 1);
  Heartbeat(agent, "n0", {TaskReport{core::JobId{id}, 0, attempt + 1, TaskPhase::kExited, 0, {}}});
  EXPECT_EQ(WaitForState(alice, id, "succeeded")["attempts"], 2);

  // A job that never ran has no run to repeat; one that must not run
  // twice is refused, ended or not.
  const int64_t never =
      alice.Post("/api/v1/jobs", json{{"command", {"x"}}, {"gpus", 1}, {"hold", true}}).body["id"];
  ASSERT_EQ(alice.Post("/api/v1/jobs/" + std::to_string(never) + "/cancel").status, 200);
  const Reply unran = alice.Post("/api/v1/jobs/" + std::to_string(never) + "/requeue");
  EXPECT_EQ(unran.status, 409);
  EXPECT_THAT(unran.body["error"]["message"].get<std::string>(),
              ::testing::HasSubstr("without ever running"));
  const auto [once, once_attempt] = SubmitAndRun(alice, agent, json{{"requeue", false}});
  Heartbeat(agent, "n0",
            {TaskReport{core::JobId{once}, 0, once_attempt, TaskPhase::kExited, 0, {}}});
  WaitForState(alice, once, "succeeded");
  const Reply refused = alice.Post("/api/v1/jobs/" + std::to_string(once) + "/requeue");
  EXPECT_EQ(refused.status, 409);
  EXPECT_THAT(refused.body["error"]["message"].get<std::string>(),
              ::testing::HasSubstr("requeue false"));
}

}  // namespace
}  // namespace berth::server::api_testing
