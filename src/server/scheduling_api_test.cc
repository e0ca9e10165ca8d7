// Over the HTTP API: why a pending job waits, its ETA, preemption, and the
// berth policy's learning from finished jobs on a live server.
#include "server/api_test_fixture.h"

namespace berth::server::api_testing {
namespace {

TEST_F(ApiTest, PendingJobsSayWhyInWordsEverywhere) {
  Client alice = As(NewToken("alice", "user"));
  RegisterAgent("n0", 8);
  // No node could ever host it; it asks to wait for nodes that could.
  const int64_t id =
      alice
          .Post("/api/v1/jobs",
                json{{"command", {"x"}}, {"gpus", 8}, {"tasks", 2}, {"wait_for_nodes", true}})
          .body["id"];
  json explained = json::object();
  for (int i = 0; i < 300 && explained.value("reason", "") != "infeasible"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    explained = alice.Get("/api/v1/jobs/" + std::to_string(id) + "/explain").body;
  }
  ASSERT_EQ(explained["reason"], "infeasible") << explained.dump();
  EXPECT_THAT(explained["message"].get<std::string>(), HasSubstr("can never start"));
  EXPECT_THAT(explained["message"].get<std::string>(), HasSubstr("2 tasks x 8 GPUs"));
  EXPECT_THAT(explained["message"].get<std::string>(),
              HasSubstr("1 of 1 nodes could ever host it; the nodes of one GPU model could host 1 "
                        "of its 2 tasks at once"));
  EXPECT_EQ(explained["nodes"], (json{{"total", 1}, {"fit", 1}, {"rejected", json::object()}}));
  // The full listing (from the store) carries the live reason too.
  json listed = alice.Get("/api/v1/jobs").body["jobs"];
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["reason"], "infeasible");
  EXPECT_EQ(listed[0]["position"], 0);
  EXPECT_THAT(listed[0]["message"].get<std::string>(), HasSubstr("can never start"));
}

TEST_F(ApiTest, APendingJobKeepsItsEtaBetweenFullExplanations) {
  Client alice = As(NewToken("alice", "user"));
  Client agent = RegisterAgent("n0", 4);
  const int64_t running =
      alice.Post("/api/v1/jobs", json{{"command", {"x"}}, {"gpus", 4}, {"time_limit_s", 600}})
          .body["id"];
  WaitForAssignment(agent, "n0", running);
  const int64_t blocked =
      alice.Post("/api/v1/jobs", json{{"command", {"x"}}, {"gpus", 4}}).body["id"];
  const std::string explain = "/api/v1/jobs/" + std::to_string(blocked) + "/explain";
  clock_.Advance(core::Duration::Seconds(10));  // the next cycle explains in full
  json explained = alice.Get(explain).body;
  for (int i = 0; i < 300 && explained["eta"].is_null(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    explained = alice.Get(explain).body;
  }
  ASSERT_FALSE(explained["eta"].is_null()) << explained.dump();
  const json eta = explained["eta"];
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // several cycles, none full
  EXPECT_EQ(alice.Get(explain).body["eta"], eta);
  EXPECT_THAT(alice.Get(explain).body["message"].get<std::string>(), HasSubstr("; expected "));
  EXPECT_EQ(alice.Get("/api/v1/jobs/" + std::to_string(blocked)).body["eta"], eta);
  const json listed = alice.Get("/api/v1/jobs?live=true").body["jobs"];
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[1]["eta"], eta);
}

// Between full passes (one every explain_every = 10 s of the fake clock), a
// cycle walks only queue_depth jobs from the front of a longer queue: a job
// behind them that could backfill waits for the next full pass.
TEST_F(ApiTest, BetweenFullPassesACycleWalksOnlyTheFrontOfALongQueue) {
  server_.reset();
  policy_ = "slurm";  // backfill; equal priorities go in submission order
  queue_depth_ = 2;
  StartServer();
  Client alice = As(NewToken("alice", "user"));
  Client agent = RegisterAgent("n0", 8);
  auto submit = [&](int gpus, int limit_s) -> int64_t {
    return alice
        .Post("/api/v1/jobs", json{{"command", {"x"}}, {"gpus", gpus}, {"time_limit_s", limit_s}})
        .body["id"];
  };
  WaitForAssignment(agent, "n0", submit(4, 600));
  const int64_t first = submit(8, 600);
  const int64_t second = submit(8, 600);
  const int64_t small = submit(1, 60);  // ends before the first one's reservation
  const std::string explain = "/api/v1/jobs/" + std::to_string(first) + "/explain";
  for (int i = 0; i < 300 && alice.Get(explain).body.value("reason", "") != "reserved"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(alice.Get(explain).body["reason"], "reserved");
  const json reserved = alice.Get(explain).body;
  EXPECT_EQ(reserved["nodes"], (json{{"total", 1}, {"fit", 0}, {"rejected", {{"gpus", 1}}}}));
  EXPECT_THAT(reserved["message"].get<std::string>(),
              HasSubstr("are reserved for it as running jobs end; 0 of 1 nodes can start it now: "
                        "1 has fewer than 8 free GPUs"));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // several more cycles
  EXPECT_EQ(alice.Get("/api/v1/jobs/" + std::to_string(small)).body["state"], "pending")
      << "third in line, behind a depth of two";

  clock_.Advance(core::Duration::Seconds(10));  // the next cycle is a full pass
  WaitForState(alice, small, "starting");
  EXPECT_EQ(alice.Get("/api/v1/jobs/" + std::to_string(second)).body["state"], "pending");
}

// The berth policy orders by predicted run time, learned from jobs that
// finished.
class PredictorApiTest : public ApiTest {
 protected:
  void SetUp() override {
    policy_ = "berth";
    StartServer();
  }

  // n0 starts job `id` and reports it running for `run_time` of the test's
  // clock; returns the attempt.
  int32_t RunOnN0(Client& user, Client& agent, int64_t id, core::Duration run_time) {
    const int32_t attempt = WaitForAssignment(agent, "n0", id)["attempt"];
    const std::vector<TaskReport> running = Running(id, attempt);
    Heartbeat(agent, "n0", running);
    WaitForState(user, id, "running");
    AdvanceWithHeartbeats(agent, "n0", run_time, running);
    return attempt;
  }

  // Runs job `id` on n0 to success, in `run_time`.
  void RunToSuccess(Client& user, Client& agent, int64_t id, core::Duration run_time) {
    const int32_t attempt = RunOnN0(user, agent, id, run_time);
    Heartbeat(agent, "n0", {TaskReport{core::JobId{id}, 0, attempt, TaskPhase::kExited, 0, {}}});
    WaitForState(user, id, "succeeded");
  }
  // The same for a new job of this name.
  void RunToSuccess(Client& user, Client& agent, const std::string& name, core::Duration run_time) {
    const int64_t id =
        user.Post("/api/v1/jobs", json{{"name", name}, {"command", {"x"}}}).body["id"];
    RunToSuccess(user, agent, id, run_time);
  }

  // Polls until the pending job `id` holds `position` in the queue; returns
  // its explanation.
  json WaitForPosition(Client& user, int64_t id, int position) {
    const std::string explain = "/api/v1/jobs/" + std::to_string(id) + "/explain";
    json explained;
    for (int i = 0; i < 300; ++i) {
      explained = user.Get(explain).body;
      if (explained.contains("position") && explained["position"] == position) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return explained;
  }

  // Whether a "train" job goes ahead of one submitted before it with the
  // user's word that it takes an hour, which is also what a job without
  // history is predicted to take: only if the server learned that "train"
  // takes 2 minutes.
  void ExpectTrainGoesFirst(Client& user, Client& agent) {
    const int64_t hog = user.Post("/api/v1/jobs", json{{"command", {"x"}}}).body["id"];
    WaitForAssignment(agent, "n0", hog);
    const int64_t unknown =
        user.Post("/api/v1/jobs", json{{"name", "eval"}, {"command", {"x"}}, {"estimate_s", 3600}})
            .body["id"];
    const int64_t train =
        user.Post("/api/v1/jobs", json{{"name", "train"}, {"command", {"x"}}}).body["id"];
    const json explained = WaitForPosition(user, train, 0);
    EXPECT_EQ(explained["position"], 0) << explained.dump();
    EXPECT_EQ(user.Get("/api/v1/jobs/" + std::to_string(unknown) + "/explain").body["position"], 1);
  }
};

TEST_F(PredictorApiTest, TheBerthPolicyLearnsRunTimesFromJobsThatFinished) {
  Client alice = As(NewToken("alice", "user"));
  Client agent = RegisterAgent("n0", 1);
  for (int i = 0; i < 3; ++i) RunToSuccess(alice, agent, "train", core::Duration::Seconds(120));
  ExpectTrainGoesFirst(alice, agent);
}

TEST_F(PredictorApiTest, WhatThePredictorLearnedOutlivesARestart) {
  const std::string token = NewToken("alice", "user");
  Client alice = As(token);
  Client agent = RegisterAgent("n0", 1);
  for (int i = 0; i < 3; ++i) RunToSuccess(alice, agent, "train", core::Duration::Seconds(120));

  server_.reset();
  StartServer();
  Client alice_again = As(token);
  Client agent_again = RegisterAgent("n0", 1);
  ExpectTrainGoesFirst(alice_again, agent_again);
}

// Unnamed jobs of one user and GPU count submitted minutes apart are a
// burst (core/bursts.h): its first member to finish predicts the rest, before
// and after a restart. Without the burst the pending member would be
// unknown, and would rank as a probe (10 minutes, its burst-mate not yet
// seen to start) or as a fresh job (1 hour): behind one its user expects to
// take 5 minutes.
TEST_F(PredictorApiTest, ABurstsFinishedMemberPredictsTheRestAcrossARestart) {
  const std::string token = NewToken("alice", "user");
  Client alice = As(token);
  Client agent = RegisterAgent("n0", 1);
  const json unnamed = json{{"command", {"x"}}};
  const int64_t first = alice.Post("/api/v1/jobs", unnamed).body["id"];
  RunToSuccess(alice, agent, first, core::Duration::Minutes(2));
  const int64_t hog =
      alice.Post("/api/v1/jobs", json{{"name", "hog"}, {"command", {"x"}}}).body["id"];
  WaitForAssignment(agent, "n0", hog);
  const int64_t eval =
      alice.Post("/api/v1/jobs", json{{"name", "eval"}, {"command", {"x"}}, {"estimate_s", 300}})
          .body["id"];
  const int64_t member = alice.Post("/api/v1/jobs", unnamed).body["id"];  // 2 minutes on
  json explained = WaitForPosition(alice, member, 0);
  EXPECT_EQ(explained["position"], 0) << explained.dump();
  EXPECT_EQ(alice.Get("/api/v1/jobs/" + std::to_string(eval) + "/explain").body["position"], 1);

  server_.reset();
  StartServer();  // n0 keeps its lease, and the hog its GPU
  Client alice_again = As(token);
  explained = WaitForPosition(alice_again, member, 0);
  EXPECT_EQ(explained["position"], 0) << explained.dump();
  EXPECT_EQ(alice_again.Get("/api/v1/jobs/" + std::to_string(eval) + "/explain").body["position"],
            1);
}

// Once a burst's member has started, the rest of it is no longer probed: a
// pending member ranks as a job nothing is known of (1 hour), behind one its
// user expects to take 20 minutes; a probe (10 minutes) would go ahead.
TEST_F(PredictorApiTest, ABurstWhoseMemberStartedIsNoLongerProbed) {
  Client alice = As(NewToken("alice", "user"));
  Client agent = RegisterAgent("n0", 2);
  const json unnamed = json{{"command", {"x"}}};
  const int64_t started = alice.Post("/api/v1/jobs", unnamed).body["id"];
  const int32_t attempt = RunOnN0(alice, agent, started, core::Duration::Seconds(10));
  const int64_t hog =
      alice.Post("/api/v1/jobs", json{{"name", "hog"}, {"command", {"x"}}}).body["id"];
  WaitForAssignment(agent, "n0", hog, Running(started, attempt));
  const int64_t quick =
      alice.Post("/api/v1/jobs", json{{"name", "quick"}, {"command", {"x"}}, {"estimate_s", 1200}})
          .body["id"];
  const int64_t member = alice.Post("/api/v1/jobs", unnamed).body["id"];
  // The later submit: once it holds a place, so does the earlier one.
  const json explained = WaitForPosition(alice, member, 1);
  EXPECT_EQ(explained["position"], 1) << explained.dump();
  EXPECT_EQ(alice.Get("/api/v1/jobs/" + std::to_string(quick) + "/explain").body["position"], 0);
}

// A job's earlier runs outlive a restart. With nothing learned the berth
// policy expects a job to run 1 h, and one that ran 2 h as long again: a
// fresh job goes first. A restart that forgot the 2 h would rank the
// requeued job as fresh and, having waited longer, first.
TEST_F(PredictorApiTest, AJobsEarlierRunsOutliveARestart) {
  const std::string token = NewToken("alice", "user");
  Client alice = As(token);
  Client n0 = RegisterAgent("n0", 8);
  const int64_t ran = alice.Post("/api/v1/jobs", json{{"command", {"x"}}, {"gpus", 8}}).body["id"];
  RunOnN0(alice, n0, ran, core::Duration::Hours(2));
  // n0 falls silent past its lease: the job goes back to the queue.
  clock_.Advance(core::Duration::Seconds(50));
  WaitForState(alice, ran, "pending");
  const int64_t fresh =
      alice.Post("/api/v1/jobs", json{{"command", {"y"}}, {"gpus", 8}}).body["id"];

  server_.reset();
  StartServer();
  Client n0_again = RegisterAgent("n0", 8);
  json assigned;
  for (int i = 0; i < 300 && assigned.is_null(); ++i) {
    Reply reply = Heartbeat(n0_again, "n0", {});
    if (!reply.body["run"].empty()) assigned = reply.body["run"][0];
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_FALSE(assigned.is_null()) << "n0 came back and nothing started";
  EXPECT_EQ(assigned["job"], fresh);
  EXPECT_EQ(As(token).Get("/api/v1/jobs/" + std::to_string(ran)).body["state"], "pending");
}

// A cycle's plan applied: the preemptible job is told to stop (its record
// says why, its agent gets the stop), the job it makes room for waits until
// the victim has exited, then starts; the victim waits to run again.
TEST_F(ApiTest, APreemptedJobStopsThenTheJobItMakesRoomForStarts) {
  server_.reset();
  policy_ = "berth";  // preempts preemptible jobs for higher-priority ones
  StartServer();
  Client alice = As(NewToken("alice", "user"));
  Client agent = RegisterAgent("n0", 8);
  const int64_t low = alice
                          .Post("/api/v1/jobs", json{{"command", {"x"}},
                                                     {"gpus", 8},
                                                     {"priority", "low"},
                                                     {"preemptible", true},
                                                     {"grace_s", 1}})
                          .body["id"];
  const int32_t attempt = WaitForAssignment(agent, "n0", low)["attempt"];
  const std::vector<TaskReport> running = Running(low, attempt);
  Heartbeat(agent, "n0", running);
  WaitForState(alice, low, "running");
  // Past the policy's minimum run before a preemption (10 minutes).
  AdvanceWithHeartbeats(agent, "n0", core::Duration::Minutes(11), running);

  const int64_t high =
      alice.Post("/api/v1/jobs", json{{"command", {"y"}}, {"gpus", 8}, {"priority", "high"}})
          .body["id"];
  const json stopping = WaitForState(alice, low, "completing");
  EXPECT_EQ(stopping["reason"], "preempted");
  EXPECT_EQ(stopping["message"],
            "preempted for job " + std::to_string(high) + "; stopping within its grace period");
  Reply desired = Heartbeat(agent, "n0", running);
  ASSERT_EQ(desired.status, 200);
  ASSERT_EQ(desired.body["stop"].size(), 1u) << desired.body.dump();
  EXPECT_EQ(desired.body["stop"][0]["job"], low);
  EXPECT_EQ(desired.body["stop"][0]["attempt"], attempt);
  // The victim holds its GPUs until it has exited.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(alice.Get("/api/v1/jobs/" + std::to_string(high)).body["state"], "pending");

  Heartbeat(agent, "n0", {TaskReport{core::JobId{low}, 0, attempt, TaskPhase::kExited, -1, 15}});
  const json started = WaitForAssignment(agent, "n0", high);
  EXPECT_EQ(started["attempt"], 1);
  const json requeued = WaitForState(alice, low, "pending");
  EXPECT_EQ(requeued["preemptions"], 1);
  EXPECT_EQ(requeued["attempts"], 1);
  // The preempted run is accounted: 8 GPUs for its 11 minutes (the job it
  // made room for has run for no time yet).
  json by_user;
  for (int i = 0; i < 300 && by_user.empty(); ++i) {
    by_user = alice.Get("/api/v1/usage").body["by_user"];
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(by_user.size(), 1u);
  EXPECT_NEAR(by_user[0]["gpu_hours"].get<double>(), 8 * 11.0 / 60, 0.01);
}

// A run its node took down is not a preemption: the job's next run is open
// to the gain rule after the policy's minimum run (10 minutes), not after
// the longer one that earlier stops earn (Policy::min_run_growth: 12
// minutes after one).
TEST_F(PredictorApiTest, ARunLostWithItsNodeIsNotAPreemption) {
  Client alice = As(NewToken("alice", "user"));
  Client n0 = RegisterAgent("n0", 8);
  const int64_t lost = alice
                           .Post("/api/v1/jobs", json{{"name", "long"},
                                                      {"command", {"x"}},
                                                      {"gpus", 8},
                                                      {"estimate_s", 36000},
                                                      {"preemptible", true},
                                                      {"grace_s", 1}})
                           .body["id"];
  RunOnN0(alice, n0, lost, core::Duration::Zero());
  // n0 falls silent past its lease: the job goes back to the queue.
  clock_.Advance(core::Duration::Seconds(50));
  EXPECT_EQ(WaitForState(alice, lost, "pending")["preemptions"], 0);

  Client n0_again = RegisterAgent("n0", 8);
  RunOnN0(alice, n0_again, lost, core::Duration::Minutes(11));
  const int64_t quick =
      alice
          .Post("/api/v1/jobs",
                json{{"name", "quick"}, {"command", {"y"}}, {"gpus", 8}, {"estimate_s", 60}})
          .body["id"];
  const json stopping = WaitForState(alice, lost, "completing");
  EXPECT_EQ(stopping["reason"], "preempted");
  EXPECT_EQ(stopping["message"],
            "preempted for job " + std::to_string(quick) + "; stopping within its grace period");
}

}  // namespace
}  // namespace berth::server::api_testing
