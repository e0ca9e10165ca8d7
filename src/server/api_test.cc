// End to end over real HTTP on loopback: a real server (SQLite file in a
// temp dir) and httplib clients playing users, admins and agents.
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "http/testing/raw_connection.h"
#include "server/api_test_fixture.h"

namespace berth::server::api_testing {
namespace {

TEST_F(ApiTest, EveryEndpointWantsAValidToken) {
  Client anonymous = As("");
  EXPECT_EQ(anonymous.Get("/api/v1/jobs").status, 401);
  EXPECT_EQ(anonymous.Post("/api/v1/jobs", json{{"command", {"true"}}}).status, 401);
  EXPECT_EQ(As("berth_nope_0123").Get("/api/v1/nodes").status, 401);
  Reply bad = As("not-a-token").Get("/api/v1/jobs/1");
  EXPECT_EQ(bad.status, 401);
  EXPECT_THAT(bad.body["error"]["message"].get<std::string>(), HasSubstr("token"));
  EXPECT_EQ(anonymous.Post("/api/v1/agent/heartbeat", json{{"node", "n"}}).status, 401);
  // Health is open (probes); metrics are not (they name users).
  httplib::Client raw("127.0.0.1", server_->port());
  EXPECT_EQ(raw.Get("/healthz")->status, 200);
  EXPECT_EQ(raw.Get("/readyz")->status, 200);
  EXPECT_EQ(raw.Get("/metrics")->status, 401);
}

TEST_F(ApiTest, MetricsAreForAdminsAndMetricsTokensWhichReadNothingElse) {
  const std::string metrics_token = NewToken("prometheus", "metrics");
  auto scrape = [this](const std::string& token) {
    httplib::Client raw("127.0.0.1", server_->port());
    httplib::Result result = raw.Get("/metrics", {{"Authorization", "Bearer " + token}});
    return result ? result->status : -1;
  };
  EXPECT_EQ(scrape(metrics_token), 200);
  EXPECT_EQ(scrape(admin_token_), 200);
  EXPECT_EQ(scrape(NewToken("alice", "user")), 403);
  EXPECT_EQ(scrape(NewToken("agent-n0", "agent", "n0")), 403);
  Client prometheus = As(metrics_token);
  EXPECT_EQ(prometheus.Get("/api/v1/jobs").status, 403);
  EXPECT_EQ(prometheus.Get("/api/v1/nodes").status, 403);
  EXPECT_EQ(prometheus.Post("/api/v1/agent/heartbeat", json{{"node", "n0"}}).status, 403);
  EXPECT_EQ(prometheus.Post("/api/v1/jobs", json{{"command", {"true"}}}).status, 403);

  // Where only trusted hosts reach the listener, the operator may open it.
  server_.reset();
  public_metrics_ = true;
  StartServer();
  httplib::Client raw("127.0.0.1", server_->port());
  EXPECT_EQ(raw.Get("/metrics")->status, 200);
}

TEST_F(ApiTest, ATokenIsCheckedBeforeTheBodyIsRead) {
  // A large body announced and never sent: the refusal comes from the head.
  for (const std::string& token : {std::string(""), std::string("not-a-token")}) {
    http::testing::RawConnection connection(server_->port());
    ASSERT_TRUE(connection.Send("POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\n" +
                                (token.empty() ? "" : "Authorization: Bearer " + token + "\r\n") +
                                "Content-Length: 900000\r\n\r\n"));
    const std::string answer = connection.ReadResponse();
    EXPECT_EQ(http::testing::StatusLine(answer), "HTTP/1.1 401 Unauthorized") << token;
    EXPECT_EQ(json::parse(http::testing::BodyOf(answer))["error"]["code"], "unauthenticated");
  }
  // Past the limit: 413 from the head, with a token or not.
  http::testing::RawConnection connection(server_->port());
  ASSERT_TRUE(connection.Send("POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                              admin_token_ + "\r\nContent-Length: 300000000\r\n\r\n"));
  EXPECT_EQ(http::testing::StatusLine(connection.ReadResponse()), "HTTP/1.1 413 Payload Too Large");
}

TEST_F(ApiTest, APostWithoutABodyIsAnEmptyBody) {
  Client alice = As(NewToken("alice", "user"));
  const int64_t id =
      alice.Post("/api/v1/jobs", json{{"command", {"x"}}, {"hold", true}}).body["id"];
  // As `curl -X POST .../cancel` sends it: no body and no Content-Length.
  http::testing::RawConnection connection(server_->port());
  ASSERT_TRUE(connection.Send("POST /api/v1/jobs/" + std::to_string(id) +
                              "/cancel HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                              admin_token_ + "\r\n\r\n"));
  const std::string answer = connection.ReadResponse();
  EXPECT_EQ(http::testing::StatusLine(answer), "HTTP/1.1 200 OK") << answer;
  EXPECT_EQ(alice.Get("/api/v1/jobs/" + std::to_string(id)).body["state"], "cancelled");
}

TEST_F(ApiTest, RolesLimitWhatEachTokenMayDo) {
  Client alice = As(NewToken("alice", "user"));
  Client agent = As(NewToken("agent-n0", "agent", "n0"));
  EXPECT_EQ(alice.Post("/api/v1/tokens", json{{"user", "x"}}).status, 403);
  EXPECT_EQ(alice.Post("/api/v1/nodes/n0/drain").status, 403);
  EXPECT_EQ(alice.Post("/api/v1/agent/register", json{{"node", "n0"}}).status, 403);
  EXPECT_EQ(agent.Get("/api/v1/jobs").status, 403);
  EXPECT_EQ(agent.Post("/api/v1/jobs", json{{"command", {"true"}}}).status, 403);
  // An agent speaks only for its own node.
  NodeRegistration other;
  other.node = "n1";
  EXPECT_EQ(agent.Post("/api/v1/agent/register", protocol::RegistrationJson(other)).status, 403);
}

TEST_F(ApiTest, SubmitShowListCancel) {
  Client alice = As(NewToken("alice", "user"));
  Client bob = As(NewToken("bob", "user"));
  Reply submitted =
      alice.Post("/api/v1/jobs", json{{"command", {"sleep", "1"}}, {"env", {{"SECRET", "42"}}}});
  ASSERT_EQ(submitted.status, 201) << submitted.body.dump();
  const int64_t id = submitted.body["id"];

  json job = alice.Get("/api/v1/jobs/" + std::to_string(id)).body;
  EXPECT_EQ(job["state"], "pending");
  EXPECT_EQ(job["user"], "alice");
  EXPECT_EQ(job["gpus"], 1);
  EXPECT_EQ(job["env"]["SECRET"], "42");
  // Bob sees the job, not its environment, and cannot cancel it.
  json seen_by_bob = bob.Get("/api/v1/jobs/" + std::to_string(id)).body;
  EXPECT_EQ(seen_by_bob["state"], "pending");
  EXPECT_FALSE(seen_by_bob.contains("env"));
  EXPECT_EQ(bob.Post("/api/v1/jobs/" + std::to_string(id) + "/cancel").status, 403);

  EXPECT_EQ(bob.Get("/api/v1/whoami").body, json({{"user", "bob"}, {"role", "user"}}));
  json listed = bob.Get("/api/v1/jobs?user=alice").body;
  ASSERT_EQ(listed["jobs"].size(), 1u);
  EXPECT_EQ(listed["jobs"][0]["id"], id);

  EXPECT_EQ(alice.Post("/api/v1/jobs/" + std::to_string(id) + "/cancel").status, 200);
  EXPECT_EQ(alice.Get("/api/v1/jobs/" + std::to_string(id)).body["state"], "cancelled");
  EXPECT_EQ(alice.Post("/api/v1/jobs/" + std::to_string(id) + "/cancel").status, 409);
  EXPECT_EQ(alice.Get("/api/v1/jobs/999999").status, 404);
}

TEST_F(ApiTest, BadInputIsA4xxNamingTheFieldAndChangesNothing) {
  Client alice = As(NewToken("alice", "user"));
  EXPECT_EQ(alice.PostRaw("/api/v1/jobs", "{not json").status, 400);
  Reply unknown = alice.Post("/api/v1/jobs", json{{"command", {"true"}}, {"gpu", 1}});
  EXPECT_EQ(unknown.status, 400);
  EXPECT_THAT(unknown.body["error"]["message"].get<std::string>(), HasSubstr("gpu"));
  Reply absurd = alice.Post("/api/v1/jobs", json{{"command", {"true"}}, {"gpus", 100000}});
  EXPECT_EQ(absurd.status, 400);
  EXPECT_THAT(absurd.body["error"]["message"].get<std::string>(), HasSubstr("gpus"));
  Reply dependency =
      alice.Post("/api/v1/jobs", json{{"command", {"true"}}, {"depends_on", {"afterok:424242"}}});
  EXPECT_EQ(dependency.status, 400);
  EXPECT_THAT(dependency.body["error"]["message"].get<std::string>(), HasSubstr("depends_on"));
  Reply huge = alice.PostRaw("/api/v1/jobs", std::string(2 << 20, ' '));
  EXPECT_EQ(huge.status, 413);
  EXPECT_THAT(huge.body["error"]["message"].get<std::string>(), HasSubstr("body"));
  Reply nowhere = alice.Get("/api/v1/jbos");
  EXPECT_EQ(nowhere.status, 404);
  EXPECT_THAT(nowhere.body["error"]["message"].get<std::string>(), HasSubstr("/api/v1/jbos"));
  EXPECT_EQ(alice.Get("/api/v1/jobs?colour=red").status, 400);
  // What the request said comes back escaped: the message may reach a terminal.
  Reply control = alice.Get("/api/v1/jobs?col%01our=red");
  EXPECT_EQ(control.status, 400);
  EXPECT_THAT(control.body["error"]["message"].get<std::string>(),
              HasSubstr("unknown query parameter 'col\\x01our'"));
  Reply id = alice.Get("/api/v1/jobs/99999999999999999999");
  EXPECT_EQ(id.status, 400);
  EXPECT_EQ(id.body["error"]["message"], "id: expected a job id, got '99999999999999999999'");
  Reply path = alice.Get("/api/v1/jobs/7%C3%A9%0A");
  EXPECT_EQ(path.status, 404);
  EXPECT_EQ(path.body["error"]["message"], "no route GET /api/v1/jobs/7\\xc3\\xa9\\x0a");
  EXPECT_TRUE(alice.Get("/api/v1/jobs").body["jobs"].empty()) << "nothing was accepted";
}

TEST_F(ApiTest, IdempotentSubmitReturnsTheSameJob) {
  Client alice = As(NewToken("alice", "user"));
  const json body{{"command", {"true"}}, {"idempotency_key", "run-7"}};
  Reply first = alice.Post("/api/v1/jobs", body);
  Reply again = alice.Post("/api/v1/jobs", body);
  ASSERT_EQ(first.status, 201);
  ASSERT_EQ(again.status, 201);
  EXPECT_EQ(first.body["id"], again.body["id"]);
  EXPECT_EQ(alice.Get("/api/v1/jobs").body["jobs"].size(), 1u);
}

TEST_F(ApiTest, EndedJobsTheServerNoLongerKeepsInMemoryStayEnded) {
  server_.reset();
  ended_kept_ = 1;
  StartServer();
  Client alice = As(NewToken("alice", "user"));
  const json body{{"command", {"true"}}, {"idempotency_key", "run-8"}};
  const int64_t first = alice.Post("/api/v1/jobs", body).body["id"];
  ASSERT_EQ(alice.Post("/api/v1/jobs/" + std::to_string(first) + "/cancel").status, 200);
  const int64_t second = alice.Post("/api/v1/jobs", json{{"command", {"true"}}}).body["id"];
  ASSERT_EQ(alice.Post("/api/v1/jobs/" + std::to_string(second) + "/cancel").status, 200);
  // Only the second job's end is kept in memory now.

  // A retry of the first submission gets the first job, still cancelled:
  // it is not queued again.
  Reply again = alice.Post("/api/v1/jobs", body);
  ASSERT_EQ(again.status, 201);
  EXPECT_EQ(again.body["id"], first);
  Client agent = RegisterAgent("n0", 8);
  const int64_t probe = alice.Post("/api/v1/jobs", json{{"command", {"true"}}}).body["id"];
  WaitForAssignment(agent, "n0", probe);  // a cycle ran since the retry
  EXPECT_EQ(alice.Get("/api/v1/jobs/" + std::to_string(first)).body["state"], "cancelled");

  // A dependency on it is answered from the store.
  const int64_t after =
      alice
          .Post("/api/v1/jobs",
                json{{"command", {"true"}}, {"depends_on", {"afterok:" + std::to_string(first)}}})
          .body["id"];
  EXPECT_EQ(WaitForState(alice, after, "cancelled")["reason"], "dependency_never_satisfied");
}

TEST_F(ApiTest, ARetryAfterARestartOfAnEndedJobsSubmissionIsNotQueuedAgain) {
  const std::string token = NewToken("alice", "user");
  const json body{{"command", {"true"}}, {"idempotency_key", "run-9"}};
  const int64_t first = As(token).Post("/api/v1/jobs", body).body["id"];
  ASSERT_EQ(As(token).Post("/api/v1/jobs/" + std::to_string(first) + "/cancel").status, 200);

  server_.reset();
  StartServer();  // knows the live jobs of the store only
  Client alice = As(token);
  Reply again = alice.Post("/api/v1/jobs", body);
  ASSERT_EQ(again.status, 201);
  EXPECT_EQ(again.body["id"], first);
  Client agent = RegisterAgent("n0", 8);
  const int64_t probe = alice.Post("/api/v1/jobs", json{{"command", {"true"}}}).body["id"];
  WaitForAssignment(agent, "n0", probe);  // a cycle ran since the retry
  EXPECT_EQ(alice.Get("/api/v1/jobs/" + std::to_string(first)).body["state"], "cancelled");
  EXPECT_EQ(alice.Get("/api/v1/jobs?live=true").body["jobs"].size(), 1u) << "the probe only";
}

// The berth_scheduler_cycles gauge in a scrape of /metrics.
int64_t Cycles(const std::string& metrics) {
  const std::string name = "\nberth_scheduler_cycles ";
  const size_t at = metrics.find(name);
  if (at == std::string::npos) return -1;
  return std::stoll(metrics.substr(at + name.size()));
}

TEST_F(ApiTest, HeldSubmissionsDoNotWakeTheSchedulerAndRunnableOnesDo) {
  server_.reset();
  tick_ = std::chrono::hours(1);  // cycles run only when woken
  StartServer();
  Client alice = As(NewToken("alice", "user"));
  const int64_t before = Cycles(ScrapeMetrics());
  ASSERT_GE(before, 0);
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(alice.Post("/api/v1/jobs", json{{"command", {"x"}}, {"hold", true}}).status, 201);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(Cycles(ScrapeMetrics()), before) << "held jobs give a cycle nothing to do";

  ASSERT_EQ(alice.Post("/api/v1/jobs", json{{"command", {"x"}}}).status, 201);
  int64_t after = before;
  for (int i = 0; i < 300 && after == before; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    after = Cycles(ScrapeMetrics());
  }
  EXPECT_GT(after, before) << "a job that can run is decided at once";
}

TEST_F(ApiTest, DependenciesAndHoldsWaitUntilTheyAreMet) {
  Client alice = As(NewToken("alice", "user"));
  Client agent = RegisterAgent("n0", 8);
  const int64_t first = alice.Post("/api/v1/jobs", json{{"command", {"a"}}}).body["id"];
  const int64_t second =
      alice.Post("/api/v1/jobs", json{{"command", {"b"}}, {"depends_on", {first}}}).body["id"];
  const int64_t held =
      alice.Post("/api/v1/jobs", json{{"command", {"c"}}, {"hold", true}}).body["id"];
  const int64_t both =
      alice.Post("/api/v1/jobs", json{{"command", {"d"}}, {"hold", true}, {"depends_on", {first}}})
          .body["id"];
  EXPECT_EQ(alice.Get("/api/v1/jobs/" + std::to_string(second)).body["state"], "held");
  EXPECT_EQ(alice.Get("/api/v1/jobs/" + std::to_string(held)).body["reason"], "held");
  // Releasing lifts its owner's hold; the dependency still holds it.
  EXPECT_EQ(alice.Post("/api/v1/jobs/" + std::to_string(both) + "/release").status, 200);
  EXPECT_EQ(alice.Get("/api/v1/jobs/" + std::to_string(both)).body["state"], "held");

  json task = WaitForAssignment(agent, "n0", first);
  Heartbeat(agent, "n0",
            {TaskReport{
                core::JobId{first}, 0, task["attempt"].get<int32_t>(), TaskPhase::kExited, 0, {}}});
  WaitForAssignment(agent, "n0", second);  // released once the first succeeded
  WaitForAssignment(agent, "n0", both);
  Reply ended = alice.Post("/api/v1/jobs/" + std::to_string(first) + "/release");
  EXPECT_EQ(ended.status, 409);
  EXPECT_THAT(ended.body["error"]["message"].get<std::string>(), HasSubstr("already ended"));

  EXPECT_EQ(alice.Get("/api/v1/jobs/" + std::to_string(held)).body["state"], "held");
  EXPECT_EQ(alice.Post("/api/v1/jobs/" + std::to_string(held) + "/release").status, 200);
  WaitForAssignment(agent, "n0", held);
}

TEST_F(ApiTest, ADependencyThatCanNeverBeMetCancelsItsDependentsForGood) {
  Client alice = As(NewToken("alice", "user"));
  const int64_t first =
      alice.Post("/api/v1/jobs", json{{"command", {"a"}}, {"hold", true}}).body["id"];
  const int64_t second =
      alice.Post("/api/v1/jobs", json{{"command", {"b"}}, {"depends_on", {first}}}).body["id"];
  const int64_t third =
      alice.Post("/api/v1/jobs", json{{"command", {"c"}}, {"depends_on", {second}}}).body["id"];
  ASSERT_EQ(alice.Post("/api/v1/jobs/" + std::to_string(first) + "/cancel").status, 200);
  json cancelled = alice.Get("/api/v1/jobs/" + std::to_string(second)).body;
  EXPECT_EQ(cancelled["state"], "cancelled");
  EXPECT_EQ(cancelled["reason"], "dependency_never_satisfied");
  EXPECT_EQ(alice.Get("/api/v1/jobs/" + std::to_string(third)).body["state"], "cancelled");
  // A dependency that ended before the submit is judged at once.
  const int64_t after_any =
      alice
          .Post("/api/v1/jobs",
                json{{"command", {"d"}}, {"depends_on", {"afterany:" + std::to_string(first)}}})
          .body["id"];
  EXPECT_EQ(alice.Get("/api/v1/jobs/" + std::to_string(after_any)).body["state"], "pending");
  ASSERT_EQ(alice.Post("/api/v1/jobs/" + std::to_string(after_any) + "/cancel").status, 200);
  // Ended jobs leave the live set: the queue no longer shows them.
  EXPECT_TRUE(alice.Get("/api/v1/jobs?live=true").body["jobs"].empty())
      << alice.Get("/api/v1/jobs?live=true").body.dump();
}

TEST_F(ApiTest, UsageAndQueues) {
  Client alice = As(NewToken("alice", "user"));
  Client agent = RegisterAgent("n0", 8);
  const json queues{
      {"queues", {{{"name", "vision"}, {"guaranteed_gpus", 4}, {"ceiling_gpus", 8}}}}};
  EXPECT_EQ(alice.Put("/api/v1/queues", queues).status, 403);
  ASSERT_EQ(Admin().Put("/api/v1/queues", queues).status, 200);
  EXPECT_EQ(alice.Post("/api/v1/jobs", json{{"command", {"x"}}, {"queue", "nlp"}}).status, 400);
  const int64_t id =
      alice.Post("/api/v1/jobs", json{{"command", {"x"}}, {"queue", "vision"}, {"gpus", 4}})
          .body["id"];
  json task = WaitForAssignment(agent, "n0", id);
  json listed = alice.Get("/api/v1/queues").body["queues"];
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["used_gpus"], 4.0);
  AdvanceWithHeartbeats(agent, "n0", core::Duration::Hours(1),
                        Running(id, task["attempt"].get<int32_t>()));
  Heartbeat(
      agent, "n0",
      {TaskReport{core::JobId{id}, 0, task["attempt"].get<int32_t>(), TaskPhase::kExited, 0, {}}});
  WaitForState(alice, id, "succeeded");
  json usage = alice.Get("/api/v1/usage").body;
  ASSERT_EQ(usage["by_user"].size(), 1u);
  EXPECT_NEAR(usage["by_user"][0]["gpu_hours"].get<double>(), 4.0, 0.01);
  EXPECT_EQ(usage["by_queue"][0]["queue"], "vision");
}

TEST_F(ApiTest, MetricsTellQueueWaitGpusByNodeAndFairShare) {
  // The clock jumps an hour between the start and the exit report: a node
  // timeout below that would let a tick in between take the node down.
  server_.reset();
  heartbeat_timeout_ = core::Duration::Hours(2);
  StartServer();
  Client alice = As(NewToken("alice", "user"));
  const int64_t id = alice.Post("/api/v1/jobs", json{{"command", {"x"}}, {"gpus", 2}}).body["id"];
  clock_.Advance(core::Duration::Seconds(120));  // no node yet: it waits two minutes
  Client agent = RegisterAgent("n0", 8);
  json task = WaitForAssignment(agent, "n0", id);
  clock_.Advance(core::Duration::Hours(1));
  // Reported exited without ever being reported running (a task shorter
  // than a heartbeat): the job goes straight to its end, once.
  Reply exited = Heartbeat(
      agent, "n0",
      {TaskReport{core::JobId{id}, 0, task["attempt"].get<int32_t>(), TaskPhase::kExited, 0, {}}});
  EXPECT_EQ(exited.status, 200) << exited.body.dump();
  WaitForState(alice, id, "succeeded");

  const std::string metrics = ScrapeMetrics();
  EXPECT_THAT(metrics, HasSubstr("berth_queue_wait_seconds_bucket{queue=\"\",le=\"60\"} 0"));
  EXPECT_THAT(metrics, HasSubstr("berth_queue_wait_seconds_bucket{queue=\"\",le=\"300\"} 1"));
  EXPECT_THAT(metrics, HasSubstr("berth_queue_wait_seconds_sum{queue=\"\"} 120"));
  EXPECT_THAT(metrics, HasSubstr("berth_jobs_finished_total{state=\"succeeded\",queue=\"\"} 1"));
  EXPECT_THAT(metrics, HasSubstr("berth_gpus{node=\"n0\",gpu_type=\"H100\",kind=\"allocated\"} 0"));
  EXPECT_THAT(metrics, HasSubstr("berth_nodes{state=\"up\"} 1"));
  // Two GPUs for an hour, barely decayed (the half-life is days).
  const std::string usage_line = "berth_user_usage_gpu_seconds{user=\"alice\"} ";
  const size_t at = metrics.find(usage_line);
  ASSERT_NE(at, std::string::npos) << metrics;
  EXPECT_NEAR(std::stod(metrics.substr(at + usage_line.size())), 7200, 100);
}

TEST_F(ApiTest, LogsComeFromTheAgentThatRanTheTaskAndOnlyToTheOwner) {
  // The agent's side of the log protocol, as `berth agent` serves it.
  httplib::Server agent_logs;
  std::string seen_key;
  std::string seen_query;
  agent_logs.Get("/logs", [&](const httplib::Request& request, httplib::Response& response) {
    seen_key = request.get_header_value("Authorization");
    seen_query = request.get_param_value("job") + "/" + request.get_param_value("task") + "/" +
                 request.get_param_value("offset");
    response.set_header("X-Berth-Log-Size", "11");
    response.set_header("X-Berth-Task-Running", "1");
    response.set_content(
        std::string("hello world").substr(std::stoul(request.get_param_value("offset"))),
        "application/octet-stream");
  });
  const int logs_port = agent_logs.bind_to_any_port("127.0.0.1");
  std::thread logs_thread([&] { agent_logs.listen_after_bind(); });

  Client alice = As(NewToken("alice", "user"));
  Client bob = As(NewToken("bob", "user"));
  Client agent = As(NewToken("agent-n0", "agent", "n0"));
  NodeRegistration registration;
  registration.node = "n0";
  registration.address = "127.0.0.1:" + std::to_string(logs_port);
  registration.logs_key = "s3cret";
  registration.gpu_type = "H100";
  registration.gpus = {GpuReport{0, 0, true}};
  ASSERT_EQ(agent.Post("/api/v1/agent/register", protocol::RegistrationJson(registration)).status,
            200);

  const int64_t id =
      alice.Post("/api/v1/jobs", json{{"command", {"x"}}, {"hold", true}}).body["id"];
  const std::string logs = "/api/v1/jobs/" + std::to_string(id) + "/logs";
  EXPECT_EQ(alice.Get(logs).status, 409) << "a job that never ran has no logs";
  ASSERT_EQ(alice.Post("/api/v1/jobs/" + std::to_string(id) + "/release").status, 200);
  WaitForAssignment(agent, "n0", id);

  httplib::Client raw("127.0.0.1", server_->port());
  const httplib::Headers alice_auth{{"Authorization", "Bearer " + NewToken("alice", "user")}};
  httplib::Result read = raw.Get(logs + "?offset=6", alice_auth);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->status, 200);
  EXPECT_EQ(read->body, "world");
  EXPECT_EQ(read->get_header_value("X-Berth-Log-Size"), "11");
  EXPECT_EQ(read->get_header_value("X-Berth-Task-Running"), "1");
  EXPECT_EQ(seen_key, "Bearer s3cret");
  EXPECT_EQ(seen_query, std::to_string(id) + "/0/6");

  EXPECT_EQ(bob.Get(logs).status, 403) << "another user's logs are private";
  EXPECT_EQ(Admin().Get(logs).status, 200);
  EXPECT_EQ(alice.Get(logs + "?task=1").status, 400);
  EXPECT_EQ(alice.Get(logs + "?offset=-1").status, 400);

  agent_logs.stop();
  logs_thread.join();
  EXPECT_EQ(alice.Get(logs).status, 503) << "the agent is unreachable";
}

TEST_F(ApiTest, HistorySamplesQueueGpusAndStartWaits) {
  const int64_t t0 = clock_.Now().micros() / 1'000'000;
  Client alice = As(NewToken("alice", "user"));
  auto samples = [&](int64_t since) {
    Reply reply = alice.Get("/api/v1/history?since=" + std::to_string(since));
    EXPECT_EQ(reply.status, 200) << reply.body.dump();
    return reply.body["samples"];
  };
  auto wait_for_sample = [&](const std::string& key, int64_t value) {
    for (int i = 0; i < 300; ++i) {
      for (const json& sample : samples(t0)) {
        if (sample[key] == value) return sample;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "no sample with " << key << " = " << value << ": " << samples(t0).dump();
    return json();
  };
  const int64_t id = alice.Post("/api/v1/jobs", json{{"command", {"x"}}, {"gpus", 4}}).body["id"];
  clock_.Advance(core::Duration::Seconds(40));  // no node yet: it waits 40 s
  json waiting = wait_for_sample("pending", 1);
  EXPECT_EQ(waiting["gpus_total"], 0);
  Client agent = RegisterAgent("n0", 4);
  WaitForAssignment(agent, "n0", id);
  clock_.Advance(core::Duration::Seconds(5));  // the next sample is due
  json started = wait_for_sample("starts", 1);
  EXPECT_EQ(started["pending"], 0);
  EXPECT_EQ(started["running"], 1);
  EXPECT_EQ(started["gpus_total"], 4);
  EXPECT_EQ(started["gpus_allocated"], 4);
  EXPECT_EQ(started["nodes_up"], 1);
  EXPECT_EQ(started["wait_sum_s"], 40.0);
  EXPECT_EQ(started["wait_max_s"], 40.0);
  // Buckets: <=1, <=5, <=10, <=30, <=60 s ...: 40 s is in the fifth.
  EXPECT_EQ(started["wait_buckets"][4], 1) << started.dump();

  Reply whole = alice.Get("/api/v1/history");
  EXPECT_EQ(whole.body["interval_s"], 5.0);
  EXPECT_EQ(whole.body["capacity"], History::kDefaultCapacity);
  EXPECT_EQ(whole.body["wait_bounds_s"][4], 60);
  EXPECT_GE(whole.body["samples"].size(), 3u) << "the first sample, waiting, started";
  // `since` is inclusive and in unix seconds; the newest sample alone:
  const json newest = samples(started["time"].get<int64_t>());
  ASSERT_EQ(newest.size(), 1u) << newest.dump();
  EXPECT_EQ(newest[0]["starts"], 1);
  EXPECT_EQ(alice.Get("/api/v1/history?since=soon").status, 400);
  EXPECT_EQ(As("").Get("/api/v1/history").status, 401);
}

// Mode bits of a path, or -1 when it does not exist.
int ModeOf(const std::string& path) {
  struct stat status {};
  return ::stat(path.c_str(), &status) == 0 ? static_cast<int>(status.st_mode & 07777) : -1;
}

TEST_F(ApiTest, TheDataDirAndTheStoreAreTheServersAlone) {
  auto expect_private = [this] {
    EXPECT_EQ(ModeOf(dir_.path()), 0700);
    for (const char* file : {"berth.sqlite", "berth.sqlite-wal", "admin-token"}) {
      EXPECT_EQ(ModeOf(dir_.path() + "/" + file), 0600) << file;
    }
  };
  ASSERT_EQ(As(NewToken("alice", "user")).Get("/api/v1/whoami").status, 200);
  expect_private();
  // As an older Berth (or a umask of 022) left them: made private at start.
  server_.reset();
  for (const char* file : {"berth.sqlite", "berth.sqlite-wal", "berth.sqlite-shm"}) {
    ::chmod((dir_.path() + "/" + file).c_str(), 0644);
  }
  ::chmod(dir_.path().c_str(), 0755);
  StartServer();
  expect_private();
}

TEST_F(ApiTest, ASecondServerOnTheSameDataDirRefusesToStartNamingTheFirst) {
  ServerOptions options;
  options.data_dir = dir_.path();
  options.listen = "127.0.0.1:0";
  Result<std::unique_ptr<Server>> second = Server::Start(options, clock_);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(second.status().message(),
              ::testing::HasSubstr("in use by another server: " + dir_.path() +
                                   "/server.lock is held by berth server pid " +
                                   std::to_string(::getpid())));
  // The first is undisturbed, and once it stops the data dir is free.
  EXPECT_EQ(Admin().Get("/api/v1/jobs").status, 200);
  server_.reset();
  second = Server::Start(options, clock_);
  EXPECT_TRUE(second.ok()) << second.status().ToString();
}

TEST_F(ApiTest, TheDashboardIsServedWithoutATokenFromTheBinary) {
  httplib::Client raw("127.0.0.1", server_->port());
  auto source = [](const std::string& name) {
    std::ifstream in(std::string(BERTH_SOURCE_DIR) + "/src/server/dashboard/" + name,
                     std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  httplib::Result page = raw.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_THAT(page->get_header_value("Content-Security-Policy"), HasSubstr("script-src 'self'"));
  EXPECT_EQ(page->body, source("index.html"));
  EXPECT_THAT(page->body, HasSubstr("/ui/app.js"));
  for (const auto& [name, type] : std::vector<std::pair<std::string, std::string>>{
           {"app.js", "text/javascript; charset=utf-8"},
           {"style.css", "text/css; charset=utf-8"}}) {
    httplib::Result asset = raw.Get("/ui/" + name);
    ASSERT_TRUE(asset) << name;
    EXPECT_EQ(asset->status, 200) << name;
    EXPECT_EQ(asset->get_header_value("Content-Type"), type) << name;
    EXPECT_EQ(asset->get_header_value("X-Content-Type-Options"), "nosniff") << name;
    EXPECT_EQ(asset->body, source(name)) << name << " as built into the binary";
  }
  for (const std::string path : {"/ui/nope.js", "/ui/../server.cc", "/ui/dashboard/app.js"}) {
    httplib::Result missing = raw.Get(path);
    ASSERT_TRUE(missing) << path;
    EXPECT_EQ(missing->status, 404) << path;
    EXPECT_EQ(json::parse(missing->body)["error"]["code"], "not_found") << path;
  }
}

}  // namespace
}  // namespace berth::server::api_testing
