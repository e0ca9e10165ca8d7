// Accounting through the API: every run's GPU-seconds, however it ended,
// the runs going on counted up to now, and fair share's history kept across
// a restart.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "server/api_test_fixture.h"

namespace berth::server::api_testing {
namespace {

// GPU-hours of `user` in /api/v1/usage, once the store has them (runs are
// written with their job's record, just after the job's state is seen).
double UserGpuHours(Client& client, const std::string& user, double at_least) {
  double hours = 0;
  for (int i = 0; i < 300; ++i) {
    hours = 0;
    const json usage = client.Get("/api/v1/usage").body;
    for (const json& row : usage["by_user"]) {
      if (row["user"] == user) hours = row["gpu_hours"].get<double>();
    }
    if (hours >= at_least) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return hours;
}

// Runs on node n0 of eight GPUs, reported by its agent.
class UsageApiTest : public ApiTest {
 protected:
  struct Run {
    int64_t job;
    int32_t attempt;
  };

  // Submits `job` as `user`; n0 starts it and reports it running for
  // `run_for` of the test's clock.
  Run RunOnN0(Client& user, Client& n0, const json& job, core::Duration run_for) {
    const int64_t id = user.Post("/api/v1/jobs", job).body["id"];
    const Run run{id, WaitForAssignment(n0, "n0", id)["attempt"].get<int32_t>()};
    const std::vector<TaskReport> running = Running(id, run.attempt);
    Heartbeat(n0, "n0", running);
    AdvanceWithHeartbeats(n0, "n0", run_for, running);
    return run;
  }

  void ReportExit(Client& n0, const Run& run, int exit_code) {
    Heartbeat(
        n0, "n0",
        {TaskReport{core::JobId{run.job}, 0, run.attempt, TaskPhase::kExited, exit_code, {}}});
  }
};

// Issue 27: what a run's tasks used, measured by their nodes in the tasks'
// cgroups, is kept with the run and shown with the job: the largest task's
// peak memory, the CPU time of all of them.
TEST_F(UsageApiTest, WhatARunsTasksUsedIsShownWithTheJob) {
  Client alice = As(NewToken("alice", "user"));
  Client n0 = RegisterAgent("n0", 8);
  const int64_t id =
      alice.Post("/api/v1/jobs", json{{"command", {"x"}}, {"tasks", 2}, {"gpus", 1}}).body["id"];
  const int32_t attempt = WaitForAssignment(n0, "n0", id)["attempt"];
  EXPECT_TRUE(alice.Get("/api/v1/jobs/" + std::to_string(id)).body["peak_memory_mib"].is_null());
  TaskReport first{core::JobId{id}, 0, attempt, TaskPhase::kExited, 0, {}};
  first.peak_memory = core::MemoryMiB(61);
  first.cpu_time = core::Duration::Millis(1250);
  TaskReport second{core::JobId{id}, 1, attempt, TaskPhase::kExited, 0, {}};
  second.peak_memory = core::MemoryMiB(40);
  second.cpu_time = core::Duration::Millis(2250);
  Heartbeat(n0, "n0", {first, second});
  const json done = WaitForState(alice, id, "succeeded");
  EXPECT_EQ(done["peak_memory_mib"], 61);
  EXPECT_DOUBLE_EQ(done["cpu_time_s"].get<double>(), 3.5);
}

TEST_F(UsageApiTest, ARunEndedByALostNodeIsAccounted) {
  Client alice = As(NewToken("alice", "user"));
  Client n0 = RegisterAgent("n0", 8);
  const Run run =
      RunOnN0(alice, n0, json{{"command", {"x"}}, {"gpus", 4}}, core::Duration::Hours(1));
  clock_.Advance(core::Duration::Seconds(50));  // silent for 50 s > 30 s + 10 s: lost
  WaitForState(alice, run.job, "pending");      // to run again when a node has room
  // Its run lasted until the node was found lost.
  const double expected = 4 * (3600.0 + 50) / 3600;
  EXPECT_NEAR(UserGpuHours(alice, "alice", expected - 0.01), expected, 0.01);
}

TEST_F(UsageApiTest, AFailedRunThatIsRetriedIsAccountedOnce) {
  Client alice = As(NewToken("alice", "user"));
  Client n0 = RegisterAgent("n0", 8);
  const Run first = RunOnN0(alice, n0, json{{"command", {"x"}}, {"gpus", 2}, {"retries", 1}},
                            core::Duration::Hours(1));
  ReportExit(n0, first, 1);
  // The retry starts at once on the free node: it has run for no time yet.
  const json second = WaitForAssignment(n0, "n0", first.job);
  EXPECT_GT(second["attempt"].get<int32_t>(), first.attempt);
  EXPECT_NEAR(UserGpuHours(alice, "alice", 1.99), 2.0, 0.01);
}

TEST_F(UsageApiTest, RunsGoingOnCountUpToNow) {
  Client alice = As(NewToken("alice", "user"));
  Client n0 = RegisterAgent("n0", 8);
  RunOnN0(alice, n0, json{{"command", {"x"}}, {"gpus", 2}}, core::Duration::Minutes(30));
  EXPECT_NEAR(UserGpuHours(alice, "alice", 0), 1.0, 0.01);
}

TEST_F(UsageApiTest, FairShareRemembersRunsThatEndedBeforeARestart) {
  Client alice = As(NewToken("alice", "user"));
  Client n0 = RegisterAgent("n0", 8);
  const Run run =
      RunOnN0(alice, n0, json{{"command", {"x"}}, {"gpus", 2}}, core::Duration::Hours(1));
  ReportExit(n0, run, 0);
  WaitForState(alice, run.job, "succeeded");
  UserGpuHours(alice, "alice", 1.99);  // written

  server_.reset();
  StartServer();
  const std::string metrics = ScrapeMetrics();
  // Two GPUs for an hour, barely decayed (the half-life is days).
  const std::string usage_line = "berth_user_usage_gpu_seconds{user=\"alice\"} ";
  const size_t at = metrics.find(usage_line);
  ASSERT_NE(at, std::string::npos) << metrics;
  EXPECT_NEAR(std::stod(metrics.substr(at + usage_line.size())), 7200, 100);
}

}  // namespace
}  // namespace berth::server::api_testing
