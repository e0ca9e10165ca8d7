// What agents send: registrations and heartbeats survive the trip through
// JSON, and malformed ones are refused naming the field.
#include "protocol/report_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace berth::protocol {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(ReportJsonTest, ARegistrationRoundTrips) {
  NodeRegistration registration;
  registration.node = "gpu-07";
  registration.address = "10.0.0.7:7701";
  registration.logs_key = "secret";
  registration.gpu_type = "H100-80GB";
  registration.gpus = {GpuReport{0, 0, true}, GpuReport{1, 1, false}};
  registration.cpu = core::Cores(96);
  registration.memory = core::MemoryMiB(1'000'000);
  registration.labels = {{"rack", "r1"}, {"zone", "a"}};
  registration.features = {"ib", "nvlink"};
  registration.container_runtime = "podman 4.3.1 (runc, cgroupfs, cgroup v1)";  // issue 28

  Result<NodeRegistration> parsed = ParseRegistration(RegistrationJson(registration));

  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, registration);
}

TEST(ReportJsonTest, ARegistrationWithoutFeaturesHasNone) {
  Result<NodeRegistration> parsed = ParseRegistration(nlohmann::json{{"node", "n0"}});
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_TRUE(parsed->features.empty());
  EXPECT_EQ(
      ParseRegistration(nlohmann::json{{"node", "n0"}, {"features", "ib"}}).status().message(),
      "features: expected an array of strings");
}

TEST(ReportJsonTest, AHeartbeatRoundTrips) {
  Heartbeat heartbeat;
  heartbeat.node = "gpu-07";
  heartbeat.tasks = {
      TaskReport{core::JobId{7}, 0, 1, TaskPhase::kRunning, std::nullopt, std::nullopt},
      TaskReport{core::JobId{8}, 2, 3, TaskPhase::kExited, 1, std::nullopt},
      TaskReport{core::JobId{9}, 0, 1, TaskPhase::kExited, std::nullopt, 9},
      TaskReport{core::JobId{10}, 0, 1, TaskPhase::kExited, std::nullopt, 9,
                 TaskOutcome::kOutOfMemory, "out of memory: limit 64 MiB", core::MemoryMiB(64),
                 core::Duration::Micros(1'250'001)},
      TaskReport{core::JobId{11}, 0, 1, TaskPhase::kExited, 127, std::nullopt,
                 TaskOutcome::kStartFailed, "user 'bob' has no account on node gpu-07"},
      // Issue 28: a task still getting ready on its node.
      TaskReport{core::JobId{12}, 0, 1, TaskPhase::kRunning, std::nullopt, std::nullopt,
                 TaskOutcome::kExited, "", std::nullopt, std::nullopt, "pulling image img:1"},
      // Its checkpoint file was touched 12.5 s ago.
      TaskReport{core::JobId{12}, 0, 1, TaskPhase::kRunning, std::nullopt, std::nullopt,
                 TaskOutcome::kExited, "", std::nullopt, std::nullopt, "",
                 core::Duration::Millis(12'500)},
  };
  heartbeat.gpus = {GpuReport{0, 0, true}, GpuReport{1, 0, false}};
  // Issue 29: ended step tasks, by the job's task that hosted them.
  heartbeat.steps = {StepTaskReport{core::JobId{7}, 0, 1, 0, 3, 0, std::nullopt},
                     StepTaskReport{core::JobId{7}, 0, 1, 1, 0, std::nullopt, 15}};

  Result<Heartbeat> parsed = ParseHeartbeat(HeartbeatJson(heartbeat));

  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, heartbeat);
}

TEST(ReportJsonTest, TheWireNamesStayAsAgentsSendThem) {
  Heartbeat heartbeat{"n1",
                      {TaskReport{core::JobId{5}, 1, 2, TaskPhase::kExited, 0, {}},
                       TaskReport{core::JobId{6},
                                  0,
                                  1,
                                  TaskPhase::kExited,
                                  {},
                                  15,
                                  TaskOutcome::kTimeLimit,
                                  "time limit of 40 s reached",
                                  core::MemoryMiB(3),
                                  core::Duration::Millis(2500)}},
                      {GpuReport{3, 1, true}}};
  EXPECT_EQ(HeartbeatJson(heartbeat), json::parse(R"({"node": "n1",
                            "tasks": [{"job": 5, "task": 1, "attempt": 2, "phase": "exited",
                                       "exit_code": 0, "outcome": "exited"},
                                      {"job": 6, "task": 0, "attempt": 1, "phase": "exited",
                                       "signal": 15, "outcome": "time_limit",
                                       "message": "time limit of 40 s reached",
                                       "peak_memory_mib": 3, "cpu_time_s": 2.5}],
                            "gpus": [{"index": 3, "group": 1, "healthy": true}]})"));
}

struct BadReport {
  std::string body;
  std::string error;
};

TEST(ReportJsonTest, AMalformedRegistrationIsRefusedNamingTheField) {
  const BadReport cases[] = {
      {R"([])", "expected a JSON object"},
      {R"({})", "node: is required"},
      {R"({"node": ""})", "node: 1..64 characters"},
      {R"({"node": "n", "colour": 1})", "colour: unknown field"},
      {R"({"node": "n", "cpu_milli": "8"})", "cpu_milli: expected an integer"},
      {R"({"node": "n", "gpus": {}})", "gpus: expected an array"},
      {R"({"node": "n", "gpus": [{"index": 0}, {"index": "1"}]})",
       "gpus[1].index: expected an integer"},
      {R"({"node": "n", "gpus": [{"index": 64}]})", "gpus[0].index: must be 0..63, got 64"},
      {R"({"node": "n", "gpus": [{"group": 1}]})", "gpus[0].index: is required"},
      {R"({"node": "n", "gpus": [{"index": 0, "uuid": "x"}]})", "gpus[0].uuid: unknown field"},
      {R"({"node": "n", "labels": {"rack": 1}})", "labels.rack: expected a string"},
  };
  for (const BadReport& c : cases) {
    Result<NodeRegistration> parsed = ParseRegistration(json::parse(c.body));
    ASSERT_FALSE(parsed.ok()) << c.body;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << c.body;
    EXPECT_THAT(parsed.status().message(), HasSubstr(c.error)) << c.body;
  }
}

TEST(ReportJsonTest, AMalformedHeartbeatIsRefusedNamingTheField) {
  const BadReport cases[] = {
      {R"({"tasks": []})", "node: is required"},
      {R"({"node": "n", "tasks": {}})", "tasks: expected an array"},
      {R"({"node": "n", "tasks": [{"task": 0, "phase": "running"}]})", "tasks[0].job: is required"},
      {R"({"node": "n", "tasks": [{"job": 1, "phase": "done"}]})",
       "tasks[0].phase: expected running or exited, got 'done'"},
      {R"({"node": "n", "tasks": [{"job": 1, "phase": "exited"}]})",
       "tasks[0].exit_code: an exited task needs exit_code or signal"},
      {R"({"node": "n", "tasks": [{"job": 1, "phase": "running", "pid": 4}]})",
       "tasks[0].pid: unknown field"},
      {R"({"node": "n", "tasks": [{"job": 1, "phase": "exited", "exit_code": 1,
                                   "outcome": "oom"}]})",
       "tasks[0].outcome: expected exited, stopped, time_limit, out_of_memory, start_failed or "
       "lost, got 'oom'"},
      {R"({"node": "n", "tasks": [{"job": 1, "phase": "exited", "exit_code": 1,
                                   "peak_memory_mib": -2}]})",
       "tasks[0].peak_memory_mib: must be 0..1099511627776, got -2"},
      {R"({"node": "n", "tasks": [{"job": 1, "phase": "exited", "exit_code": 1,
                                   "cpu_time_s": "1s"}]})",
       "tasks[0].cpu_time_s: expected a number"},
      {R"({"node": "n", "tasks": [{"job": 1, "phase": "running", "checkpoint_age_s": -1}]})",
       "tasks[0].checkpoint_age_s: must be"},
      {R"({"node": "n", "tasks": [{"job": 1, "phase": "exited", "exit_code": 256}]})",
       "tasks[0].exit_code: must be -1000..255, got 256"},
      {R"({"node": "n", "gpus": [{"index": 0, "healthy": "yes"}]})",
       "gpus[0].healthy: expected true or false"},
      // Above INT64_MAX: refused, not wrapped around to -1 (a valid exit code).
      {R"({"node": "n", "tasks": [{"job": 1, "phase": "exited",
                                   "exit_code": 18446744073709551615}]})",
       "tasks[0].exit_code: must be -1000..255, got 18446744073709551615"},
  };
  for (const BadReport& c : cases) {
    Result<Heartbeat> parsed = ParseHeartbeat(json::parse(c.body));
    ASSERT_FALSE(parsed.ok()) << c.body;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << c.body;
    EXPECT_THAT(parsed.status().message(), HasSubstr(c.error)) << c.body;
  }
}

}  // namespace
}  // namespace berth::protocol
