// Over the HTTP API (issue 30, item 2 live): a running job reports its
// checkpoints, by `POST /jobs/{id}/checkpoint` or through its agent (the
// age of the task's checkpoint file on a heartbeat), and a preemption
// stops the job that loses least.
#include "common/time_format.h"
#include "server/api_test_fixture.h"

namespace berth::server::api_testing {
namespace {

class CheckpointApiTest : public ApiTest {
 protected:
  void SetUp() override {
    policy_ = "berth";  // preempts preemptible jobs for higher-priority ones, least loss first
    StartServer();
  }

  int64_t SubmitLow(Client& user) {
    return user
        .Post("/api/v1/jobs", json{{"command", {"x"}},
                                   {"gpus", 4},
                                   {"priority", "low"},
                                   {"preemptible", true},
                                   {"grace_s", 1}})
        .body["id"];
  }

  // Polls until the job's record shows a checkpoint.
  json WaitForCheckpoint(Client& user, int64_t id) {
    json job;
    for (int i = 0; i < 300; ++i) {
      job = user.Get("/api/v1/jobs/" + std::to_string(id)).body;
      if (job["last_checkpoint"].is_string()) return job;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "job " << id << " never showed a checkpoint: " << job.dump();
    return job;
  }
};

TEST_F(CheckpointApiTest, APreemptionStopsTheJobThatCheckpointedLast) {
  Client alice = As(NewToken("alice", "user"));
  Client bob = As(NewToken("bob", "user"));
  Client agent = RegisterAgent("n0", 8);
  const int64_t early = SubmitLow(alice);
  const int64_t late = SubmitLow(alice);
  const int32_t early_attempt = WaitForAssignment(agent, "n0", early)["attempt"];
  const int32_t late_attempt = WaitForAssignment(agent, "n0", late)["attempt"];
  std::vector<TaskReport> running = {
      TaskReport{core::JobId{early}, 0, early_attempt, TaskPhase::kRunning, {}, {}},
      TaskReport{core::JobId{late}, 0, late_attempt, TaskPhase::kRunning, {}, {}}};
  Heartbeat(agent, "n0", running);
  WaitForState(alice, early, "running");
  WaitForState(alice, late, "running");
  EXPECT_TRUE(alice.Get("/api/v1/jobs/" + std::to_string(early)).body["last_checkpoint"].is_null());
  // Past the policy's minimum run before a preemption (10 minutes).
  AdvanceWithHeartbeats(agent, "n0", core::Duration::Minutes(11), running);

  // `late`'s task touched its checkpoint file 10 minutes ago (a minute
  // into its run): its agent says so on every heartbeat from now on.
  running[1].checkpoint_age = core::Duration::Minutes(10);
  ASSERT_EQ(Heartbeat(agent, "n0", running).status, 200);
  const json late_job = WaitForCheckpoint(alice, late);
  const std::optional<core::Time> started = ParseRfc3339(late_job["start_time"].get<std::string>());
  ASSERT_TRUE(started);
  EXPECT_EQ(late_job["last_checkpoint"], FormatRfc3339(*started + core::Duration::Minutes(1)));
  // `early` saved just now and says so through the API; not another user.
  const std::string checkpoint = "/api/v1/jobs/" + std::to_string(early) + "/checkpoint";
  EXPECT_EQ(bob.Post(checkpoint).status, 403);
  const Reply reported = alice.Post(checkpoint);
  ASSERT_EQ(reported.status, 200) << reported.body.dump();
  EXPECT_EQ(reported.body["last_checkpoint"], FormatRfc3339(clock_.Now()));
  EXPECT_EQ(alice.Get("/api/v1/jobs/" + std::to_string(early)).body["last_checkpoint"],
            FormatRfc3339(clock_.Now()));

  // Room for 4 GPUs: stopping `early` loses nothing, stopping `late` ten
  // minutes of work. (Without checkpoints both would lose their whole
  // 11 minutes, and the lower-ranked, later job would go.)
  const int64_t high =
      bob.Post("/api/v1/jobs", json{{"command", {"y"}}, {"gpus", 4}, {"priority", "high"}})
          .body["id"];
  const json stopping = WaitForState(alice, early, "completing");
  EXPECT_EQ(stopping["reason"], "preempted");
  EXPECT_EQ(stopping["message"],
            "preempted for job " + std::to_string(high) + "; stopping within its grace period");
  EXPECT_EQ(alice.Get("/api/v1/jobs/" + std::to_string(late)).body["state"], "running");

  // `high` starts only once `early` has exited. Cycles run meanwhile (the
  // clock moves, ticks pass): they must see `early`'s GPUs coming back, not
  // stop `late` as well.
  AdvanceWithHeartbeats(agent, "n0", core::Duration::Seconds(30), running);
  for (int tick = 0; tick < 10; ++tick) {
    std::this_thread::sleep_for(tick_);
    clock_.Advance(core::Duration::Seconds(1));
    Heartbeat(agent, "n0", running);
  }
  EXPECT_EQ(alice.Get("/api/v1/jobs/" + std::to_string(late)).body["state"], "running");
  EXPECT_EQ(bob.Get("/api/v1/jobs/" + std::to_string(high)).body["state"], "pending");
}

TEST_F(CheckpointApiTest, OnlyARunningJobCanReportACheckpoint) {
  Client alice = As(NewToken("alice", "user"));
  const int64_t pending = SubmitLow(alice);  // no node: it waits
  const Reply refused = alice.Post("/api/v1/jobs/" + std::to_string(pending) + "/checkpoint");
  EXPECT_EQ(refused.status, 409);
  EXPECT_EQ(refused.body["error"]["message"],
            "job " + std::to_string(pending) + " is not running (state pending)");
  EXPECT_EQ(alice.Post("/api/v1/jobs/999/checkpoint").status, 404);
}

}  // namespace
}  // namespace berth::server::api_testing
