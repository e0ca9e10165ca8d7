// Over the HTTP API (issue 30, item 3 live): a job gets its ETA from the
// first cycle after its submit, with an 80% interval that time limits cap;
// an ETA that has passed is never shown in the past; and the server
// exports how its first ETAs turned out.
#include "common/time_format.h"
#include "server/api_test_fixture.h"

namespace berth::server::api_testing {
namespace {

class EtaApiTest : public ApiTest {
 protected:
  // A node of 4 GPUs taken by a job with a time limit of 600 s and a grace
  // of 5 s, reported running; returns its id.
  int64_t FillTheCluster(Client& user, Client& agent) {
    const int64_t id =
        user.Post("/api/v1/jobs",
                  json{{"command", {"x"}}, {"gpus", 4}, {"time_limit_s", 600}, {"grace_s", 5}})
            .body["id"];
    running_attempt_ = WaitForAssignment(agent, "n0", id)["attempt"];
    running_ = Running(id, running_attempt_);
    Heartbeat(agent, "n0", running_);
    WaitForState(user, id, "running");
    return id;
  }

  // Polls the explanation until it has an ETA. The fake clock does not
  // move: no full pass comes from `explain_every`.
  json WaitForEta(Client& user, int64_t id) {
    const std::string explain = "/api/v1/jobs/" + std::to_string(id) + "/explain";
    json explained;
    for (int i = 0; i < 300; ++i) {
      explained = user.Get(explain).body;
      // The ETA and the sentence that states it are applied apart (the
      // planner's thread); wait for both.
      if (!explained["eta"].is_null() &&
          explained.value("message", "").find("expected ") != std::string::npos) {
        return explained;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "job " << id << " has no ETA: " << explained.dump();
    return explained;
  }

  // The node full (FillTheCluster, from start_ = now) and a 4-GPU job
  // blocked behind it, given its first ETA: the running job's expected end
  // at 600 s. Returns the blocked job's id.
  int64_t BlockAJob(Client& user, Client& agent) {
    start_ = clock_.Now();
    running_job_ = FillTheCluster(user, agent);
    const int64_t blocked =
        user.Post("/api/v1/jobs", json{{"command", {"x"}}, {"gpus", 4}}).body["id"];
    EXPECT_EQ(WaitForEta(user, blocked)["eta"], At(core::Duration::Seconds(600)));
    return blocked;
  }

  // The running job ends at 120 s, 480 s before the blocked job's ETA, and
  // the blocked job starts.
  void EndTheRunningJobAt120s(Client& agent, int64_t blocked) {
    AdvanceWithHeartbeats(agent, "n0", core::Duration::Seconds(120), running_);
    Heartbeat(
        agent, "n0",
        {TaskReport{core::JobId{running_job_}, 0, running_attempt_, TaskPhase::kExited, 0, {}}});
    WaitForAssignment(agent, "n0", blocked);
  }

  std::string At(core::Duration after_start) const { return FormatRfc3339(start_ + after_start); }

  core::Time start_;
  int64_t running_job_ = 0;
  int32_t running_attempt_ = 0;
  std::vector<TaskReport> running_;
};

TEST_F(EtaApiTest, AJobSubmittedIntoAFullClusterHasAnEtaAfterTheFirstCycle) {
  Client alice = As(NewToken("alice", "user"));
  Client agent = RegisterAgent("n0", 4);
  start_ = clock_.Now();
  FillTheCluster(alice, agent);
  const int64_t blocked =
      alice.Post("/api/v1/jobs", json{{"command", {"x"}}, {"gpus", 4}}).body["id"];

  const json explained = WaitForEta(alice, blocked);
  // fifo plans with time limits: the running job ends at 600 s. With no
  // ETA judged yet the interval is the prior, [now, eta + wait], capped by
  // what the time limit guarantees: its end with the grace period.
  EXPECT_EQ(explained["eta"], At(core::Duration::Seconds(600)));
  EXPECT_EQ(explained["eta_low"], At(core::Duration::Zero()));
  EXPECT_EQ(explained["eta_high"], At(core::Duration::Seconds(605)));
  const std::string message = explained["message"];
  const auto clock = [&](int64_t seconds) {
    return FormatRfc3339(start_ + core::Duration::Seconds(seconds)).substr(11, 5);  // "14:05"
  };
  EXPECT_THAT(message, ::testing::EndsWith("expected " + clock(600) + ", 80%: " + clock(0) + "-" +
                                           clock(605) + " UTC (when job " +
                                           std::to_string(blocked - 1) + " ends)"));
  const json job = alice.Get("/api/v1/jobs/" + std::to_string(blocked)).body;
  EXPECT_EQ(job["eta"], explained["eta"]);
  EXPECT_EQ(job["eta_low"], explained["eta_low"]);
  EXPECT_EQ(job["eta_high"], explained["eta_high"]);
}

TEST_F(EtaApiTest, AnEtaThatHasPassedIsNeverShownInThePast) {
  // Cycles only on events (no tick in this test's time), and no node
  // declared down while the clock jumps: the ETA read after the jump is the
  // one planned before it.
  server_.reset();
  tick_ = std::chrono::hours(1);
  heartbeat_timeout_ = core::Duration::Hours(1);
  StartServer();
  Client alice = As(NewToken("alice", "user"));
  Client agent = RegisterAgent("n0", 4);
  const int64_t blocked = BlockAJob(alice, agent);

  // The running job overruns its expected end (its node has not stopped it
  // yet): the ETA of 600 s, and all of its interval, have passed.
  clock_.Advance(core::Duration::Seconds(700));
  const std::string now = FormatRfc3339(clock_.Now());
  const json explained = alice.Get("/api/v1/jobs/" + std::to_string(blocked) + "/explain").body;
  EXPECT_EQ(explained["eta"], now) << explained.dump();
  EXPECT_EQ(explained["eta_low"], now);
  EXPECT_EQ(explained["eta_high"], now);
  EXPECT_THAT(explained["message"].get<std::string>(),
              HasSubstr("expected " + now.substr(11, 5) + ", 80%: " + now.substr(11, 5) + "-" +
                        now.substr(11, 5) + " UTC"));
  const json job = alice.Get("/api/v1/jobs/" + std::to_string(blocked)).body;
  EXPECT_EQ(job["eta"], now);
  EXPECT_EQ(job["eta_high"], now);
}

TEST_F(EtaApiTest, TheMetricsSayHowTheFirstEtasTurnedOut) {
  Client alice = As(NewToken("alice", "user"));
  Client agent = RegisterAgent("n0", 4);
  const int64_t blocked = BlockAJob(alice, agent);
  EXPECT_THAT(ScrapeMetrics(), HasSubstr("berth_eta_judged_total 0"));

  // 480 s before the ETA, inside the interval [0 s, 605 s].
  EndTheRunningJobAt120s(agent, blocked);
  const std::string metrics = ScrapeMetrics();
  EXPECT_THAT(metrics, HasSubstr("berth_eta_error_seconds_bucket{le=\"-900\"} 0"));
  EXPECT_THAT(metrics, HasSubstr("berth_eta_error_seconds_bucket{le=\"-300\"} 1"));
  EXPECT_THAT(metrics, HasSubstr("berth_eta_error_seconds_sum -480"));
  EXPECT_THAT(metrics, HasSubstr("berth_eta_error_seconds_count 1"));
  EXPECT_THAT(metrics, HasSubstr("berth_eta_judged_total 1"));
  EXPECT_THAT(metrics, HasSubstr("berth_eta_interval_hits_total 1"));
  EXPECT_THAT(metrics, HasSubstr("berth_eta_interval_coverage 1"));
  EXPECT_THAT(metrics, HasSubstr("berth_eta_kept_total 1")) << "480 s early of 600 promised";
  EXPECT_THAT(metrics, HasSubstr("berth_eta_within_25pct 1"));
}

// A started job says what it was told while it waited, and how that turned
// out; the ETA calibration that learned from it survives a restart (the
// server reads the judged ETAs back from their jobs).
TEST_F(EtaApiTest, AJobKeepsItsFirstEtaAndARestartedServerCalibratesFromIt) {
  const std::string token = NewToken("alice", "user");
  Client alice = As(token);
  Client agent = RegisterAgent("n0", 4);
  const int64_t blocked = BlockAJob(alice, agent);
  const std::string path = "/api/v1/jobs/" + std::to_string(blocked);
  EXPECT_TRUE(alice.Get(path).body["first_eta"].is_null()) << "not started yet";

  EndTheRunningJobAt120s(agent, blocked);
  const json told = alice.Get(path).body["first_eta"];
  EXPECT_EQ(told["given_at"], At(core::Duration::Zero())) << told.dump();
  EXPECT_EQ(told["expected"], At(core::Duration::Seconds(600)));
  EXPECT_EQ(told["low"], At(core::Duration::Zero()));
  EXPECT_EQ(told["high"], At(core::Duration::Seconds(605))) << "capped by the time limit";
  EXPECT_EQ(told["started"], At(core::Duration::Seconds(120)));
  EXPECT_EQ(told["kept"], true) << "480 s early of 600 promised: within 10 minutes";
  EXPECT_EQ(told["inside"], true);
  EXPECT_EQ(alice.Get("/api/v1/history").body["eta_accuracy"]["calibrated_on"], 1);

  server_.reset();
  StartServer();
  Client again = As(token);  // the new server listens on a new port
  EXPECT_EQ(again.Get(path).body["first_eta"], told);
  const json accuracy = again.Get("/api/v1/history").body["eta_accuracy"];
  EXPECT_EQ(accuracy["calibrated_on"], 1) << accuracy.dump();
  EXPECT_EQ(accuracy["judged"], 0) << "counted since this server started";
}

}  // namespace
}  // namespace berth::server::api_testing
