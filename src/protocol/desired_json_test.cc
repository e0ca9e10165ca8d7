// The server's answer to a heartbeat: it survives the trip through JSON,
// an answer from a server that predates TaskLaunch's new fields still
// reads, and a malformed one is refused naming the field.
#include "protocol/desired_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace berth::protocol {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TaskAssignment Assignment() {
  TaskAssignment task;
  task.job = core::JobId{42};
  task.task = 1;
  task.attempt = 2;
  task.user = "alice";
  task.launch.name = "train";
  task.launch.command = {"torchrun", "train.py"};
  task.launch.env = {{"LR", "0.1"}};
  task.launch.time_limit = core::Duration::Seconds(7200);
  task.launch.grace = core::Duration::Seconds(10);
  task.launch.run_as.user = "alice";
  task.launch.limits = ResourceLimits{core::MilliCpu(16000), core::MemoryMiB(131072)};
  task.launch.container =
      Container{"pytorch:24.05", {Mount{"/data", "/data", true}}, "", {}, {}, ImagePull::kNever};
  task.gpus = {4, 5, 6, 7};
  task.world_size = 2;
  task.master_addr = "10.0.0.7";
  task.master_port = 21234;
  task.node_rank = 1;
  task.local_rank = 0;
  task.local_world_size = 1;
  return task;
}

TEST(DesiredJsonTest, ADesiredStateRoundTrips) {
  DesiredState desired;
  desired.run = {Assignment(), Assignment()};
  // Issue 29: the step tasks a running task hosts.
  desired.run[1].task = 0;
  desired.run[1].steps = {StepLaunch{0, 0, {"hostname"}, {}, false},
                          StepLaunch{2, 1, {"python3", "train.py"}, {{"SLURM_PROCID", "1"}}, true}};
  desired.stop = {TaskStop{core::JobId{3}, 0, 1, core::Duration::Seconds(30)},
                  TaskStop{core::JobId{4}, 2, 5, core::Duration::Zero()}};
  desired.lease = core::Duration::Millis(29'500);  // issue 32: the node lease

  Result<DesiredState> parsed = ParseDesired(DesiredJson(desired));

  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, desired);
}

TEST(DesiredJsonTest, AnEmptyAnswerRoundTrips) {
  EXPECT_EQ(DesiredJson(DesiredState{}), json::parse(R"({"run": [], "stop": []})"));
  Result<DesiredState> parsed = ParseDesired(json::parse(R"({"run": [], "stop": []})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, DesiredState{});
}

// A run entry as servers sent it before TaskLaunch: no run_as, limits or
// container. An agent reads it, and the new fields take their defaults.
TEST(DesiredJsonTest, AnAnswerWithoutTheNewFieldsReads) {
  Result<DesiredState> parsed = ParseDesired(json::parse(R"({
    "run": [{"job": 42, "task": 0, "attempt": 1, "user": "alice", "name": "train",
             "command": ["python", "train.py"], "script": "", "env": {"LR": "0.1"},
             "workdir": "", "gpus": [0, 1], "world_size": 1, "master_addr": "10.0.0.7",
             "master_port": 21234, "node_rank": 0, "local_rank": 0, "local_world_size": 1,
             "grace_s": 30.0, "time_limit_s": null}],
    "stop": [{"job": 41, "task": 0, "attempt": 2, "grace_s": 0.5}]})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->run.size(), 1u);
  const TaskAssignment& task = parsed->run[0];
  EXPECT_EQ(task.job, core::JobId{42});
  EXPECT_EQ(task.user, "alice");
  EXPECT_EQ(task.launch.command, (std::vector<std::string>{"python", "train.py"}));
  EXPECT_EQ(task.gpus, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(task.launch.grace, core::Duration::Seconds(30));
  EXPECT_FALSE(task.launch.time_limit.has_value());
  EXPECT_EQ(task.launch.run_as, RunAs{});
  EXPECT_EQ(task.launch.limits, ResourceLimits{});
  EXPECT_FALSE(task.launch.container.has_value());
  ASSERT_EQ(parsed->stop.size(), 1u);
  EXPECT_EQ(parsed->stop[0], (TaskStop{core::JobId{41}, 0, 2, core::Duration::Millis(500)}));
  EXPECT_FALSE(parsed->lease.has_value()) << "a server without node leases grants none";
}

TEST(DesiredJsonTest, AMalformedAnswerIsRefusedNamingTheField) {
  const std::pair<std::string, std::string> cases[] = {
      {R"([])", "expected a JSON object"},
      {R"({"run": [], "stop": [], "drain": true})", "drain: unknown field"},
      {R"({"run": {}})", "run: expected an array"},
      {R"({"run": [7]})", "run[0]: expected a JSON object"},
      {R"({"run": [{"job": 1, "task": 0, "attempt": 1, "steps": [{"step": 0, "rank": 0}]}]})",
       "run[0].steps[0].command: is required"},
      {R"({"run": [{"task": 0, "attempt": 1, "command": ["true"]}]})", "run[0].job: is required"},
      {R"({"run": [{"job": 1, "attempt": 1, "command": ["true"]}]})", "run[0].task: is required"},
      {R"({"run": [{"job": 1, "task": 0, "command": ["true"]}]})", "run[0].attempt: is required"},
      {R"({"run": [{"job": "1", "task": 0, "attempt": 1}]})", "run[0].job: expected an integer"},
      {R"({"run": [{"job": 1, "task": 0, "attempt": 1, "gpus": [64]}]})",
       "run[0].gpus[0]: must be 0..63, got 64"},
      {R"({"run": [{"job": 1, "task": 0, "attempt": 1, "master_port": 70000}]})",
       "run[0].master_port: must be 0..65535, got 70000"},
      {R"({"run": [{"job": 1, "task": 0, "attempt": 1, "priority": 3}]})",
       "run[0].priority: unknown field"},
      {R"({"run": [{"job": 1, "task": 0, "attempt": 1, "limits": {"cpu_milli": 1.5}}]})",
       "run[0].limits.cpu_milli: expected an integer"},
      {R"({"stop": [{"job": 1, "task": 0, "attempt": 1, "grace_s": "5"}]})",
       "stop[0].grace_s: expected a number"},
      {R"({"stop": [{"job": 1, "task": 0}]})", "stop[0].attempt: is required"},
      {R"({"stop": [{"job": 1, "task": 0, "attempt": 1, "signal": 15}]})",
       "stop[0].signal: unknown field"},
  };
  for (const auto& [body, error] : cases) {
    Result<DesiredState> parsed = ParseDesired(json::parse(body));
    ASSERT_FALSE(parsed.ok()) << body;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << body;
    EXPECT_THAT(parsed.status().message(), HasSubstr(error)) << body;
  }
}

}  // namespace
}  // namespace berth::protocol

namespace berth::protocol {
namespace {

TEST(DesiredJsonTest, SignalsRoundTripAndAreWrittenOnlyWhenThereAreAny) {
  TaskAssignment task = Assignment();
  EXPECT_FALSE(DesiredJson(DesiredState{{task}, {}}).at("run")[0].contains("signals"));
  task.signals = {SignalRequest{7, "USR1", true}, SignalRequest{9, "TERM", false}};
  Result<DesiredState> parsed = ParseDesired(DesiredJson(DesiredState{{task}, {}}));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->run.at(0).signals, task.signals);
  json bad = DesiredJson(DesiredState{{task}, {}});
  bad["run"][0]["signals"][1]["name"] = "NOPE";
  Result<DesiredState> refused = ParseDesired(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("run[0].signals[1].name"));
}

}  // namespace
}  // namespace berth::protocol
