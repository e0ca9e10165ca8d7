// TaskLaunch on the wire: every field survives the trip, the fields that
// existed before TaskLaunch keep their flat names, durations are exact to
// the microsecond, and a malformed field is refused by its path.
#include "protocol/task_launch_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace berth::protocol {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// Reads `entry` as run entry 0 of a desired state would be read.
Result<TaskLaunch> Parse(const json& entry) {
  JsonFields fields(entry, "run[0]");
  BERTH_RETURN_IF_ERROR(fields.CheckObject());
  BERTH_ASSIGN_OR_RETURN(TaskLaunch launch, ParseTaskLaunch(fields));
  BERTH_RETURN_IF_ERROR(fields.Finish());
  return launch;
}

Result<TaskLaunch> RoundTrip(const TaskLaunch& launch) {
  json entry = json::object();
  AddTaskLaunchJson(launch, entry);
  return Parse(entry);
}

TaskLaunch Full() {
  TaskLaunch launch;
  launch.name = "train";
  launch.command = {"python", "train.py", "--lr", "0.1"};
  launch.env = {{"LR", "0.1"}, {"WANDB_MODE", "offline"}};
  launch.workdir = "/data/alice";
  launch.output = "%x-%A_%a.out";
  launch.error = "%x-%j.err";
  launch.append_output = true;
  launch.array_job = 40;
  launch.array_index = 2;
  launch.time_limit = core::Duration::Millis(1500);
  launch.grace = core::Duration::Millis(250);
  launch.run_as = RunAs{"alice"};
  launch.limits = ResourceLimits{core::MilliCpu(8000), core::MemoryMiB(65536)};
  Container container;
  container.image = "nvcr.io/nvidia/pytorch:24.05-py3";
  container.mounts = {Mount{"/data", "/data", false}, Mount{"/models", "/models", true}};
  container.workdir = "/workspace";
  container.env = {{"NCCL_DEBUG", "INFO"}};
  container.entrypoint = {"/bin/bash", "-lc"};
  launch.container = container;
  launch.slurm = SlurmAllocation{{"sim1", "sim2"}, {4, 4}, "gpu", "berth", {8, 4}};
  return launch;
}

TEST(TaskLaunchJsonTest, EveryFieldRoundTrips) {
  const TaskLaunch launch = Full();
  Result<TaskLaunch> parsed = RoundTrip(launch);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, launch);
}

TEST(TaskLaunchJsonTest, AScriptOnTheHostWithoutATimeLimitRoundTrips) {
  TaskLaunch launch;
  launch.name = "etl";
  launch.script = "#!/bin/sh\necho hi\n";
  launch.run_as.user = "bob";
  Result<TaskLaunch> parsed = RoundTrip(launch);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, launch);
  EXPECT_FALSE(parsed->container.has_value());
  EXPECT_FALSE(parsed->time_limit.has_value());
}

// The fields older agents read keep their names and shapes; run_as, limits
// and container are added beside them.
TEST(TaskLaunchJsonTest, TheOldFieldsStayFlatAndTheNewOnesAreAdded) {
  TaskLaunch launch;
  launch.name = "train";
  launch.command = {"python", "train.py"};
  launch.env = {{"LR", "0.1"}};
  launch.workdir = "/data";
  launch.time_limit = core::Duration::Seconds(3600);
  launch.grace = core::Duration::Seconds(30);
  launch.run_as.user = "alice";
  launch.limits = ResourceLimits{core::MilliCpu(4000), core::MemoryMiB(16384)};
  json entry = json::object();
  AddTaskLaunchJson(launch, entry);
  EXPECT_EQ(entry, json::parse(R"({
    "name": "train", "command": ["python", "train.py"], "script": "", "env": {"LR": "0.1"},
    "workdir": "/data", "output": "", "error": "", "open_mode": "truncate",
    "array_job": null, "array_index": null, "time_limit_s": 3600.0, "grace_s": 30.0,
    "run_as": {"user": "alice"}, "limits": {"cpu_milli": 4000, "memory_mib": 16384},
    "container": null})"));
}

// 1.001 * 1e6 is 1000999.99... in binary floating point: truncating it
// would lose a microsecond on every trip.
TEST(TaskLaunchJsonTest, DurationsAreReadToTheMicrosecond) {
  Result<TaskLaunch> parsed =
      Parse(json::parse(R"({"command": ["true"], "grace_s": 1.001, "time_limit_s": 0.000249})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->grace, core::Duration::Micros(1'001'000));
  EXPECT_EQ(parsed->time_limit, core::Duration::Micros(249));

  TaskLaunch launch;
  launch.command = {"true"};
  launch.grace = core::Duration::Millis(1001);
  launch.time_limit = core::Duration::Micros(3'600'000'249);
  Result<TaskLaunch> back = RoundTrip(launch);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->grace, launch.grace);
  EXPECT_EQ(back->time_limit, launch.time_limit);
}

TEST(TaskLaunchJsonTest, AbsentNewFieldsTakeTheirDefaults) {
  Result<TaskLaunch> parsed = Parse(json::parse(R"({"command": ["true"]})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->run_as, RunAs{});
  EXPECT_EQ(parsed->limits, ResourceLimits{});
  EXPECT_FALSE(parsed->container.has_value());
  EXPECT_FALSE(parsed->slurm.has_value());
  EXPECT_EQ(parsed->grace, core::Duration::Seconds(30));
}

// Issue 29: only a Slurm job's launch carries `slurm`, so the launches of
// other jobs are what an agent from before it reads.
TEST(TaskLaunchJsonTest, OnlyASlurmJobsLaunchCarriesItsAllocation) {
  TaskLaunch plain;
  plain.command = {"true"};
  json entry = json::object();
  AddTaskLaunchJson(plain, entry);
  EXPECT_FALSE(entry.contains("slurm"));
  Result<TaskLaunch> uneven = Parse(json::parse(
      R"({"command": ["true"], "slurm": {"nodes": ["a", "b"], "tasks_per_node": [1]}})"));
  ASSERT_FALSE(uneven.ok());
  EXPECT_THAT(uneven.status().message(), HasSubstr("run[0].slurm.tasks_per_node"));
}

TEST(TaskLaunchJsonTest, AMalformedFieldIsRefusedByItsPath) {
  const std::pair<std::string, std::string> cases[] = {
      {R"({"command": ["a", 1]})", "run[0].command[1]: expected a string"},
      {R"({"command": ["a"], "open_mode": "rewrite"})",
       "run[0].open_mode: expected append or truncate, got 'rewrite'"},
      {R"({"command": "a"})", "run[0].command: expected an array of strings"},
      {R"({"env": {"A": 1}})", "run[0].env.A: expected a string"},
      {R"({"time_limit_s": "1h"})", "run[0].time_limit_s: expected a number"},
      {R"({"grace_s": -1})", "run[0].grace_s: must be 0..1000000000000, got -1"},
      {R"({"run_as": "alice"})", "run[0].run_as: expected a JSON object"},
      {R"({"run_as": {"user": 7}})", "run[0].run_as.user: expected a string"},
      {R"({"run_as": {"uid": 1000}})", "run[0].run_as.uid: unknown field"},
      {R"({"limits": {"cpu_milli": "2"}})", "run[0].limits.cpu_milli: expected an integer"},
      {R"({"limits": {"memory_mib": -1}})", "run[0].limits.memory_mib: must be 0.."},
      {R"({"limits": {"gpus": 1}})", "run[0].limits.gpus: unknown field"},
      {R"({"container": []})", "run[0].container: expected a JSON object"},
      {R"({"container": {}})", "run[0].container.image: is required"},
      {R"({"container": {"image": ""}})", "run[0].container.image: must not be empty"},
      {R"({"container": {"image": "x", "runtime": "runc"}})",
       "run[0].container.runtime: unknown field"},
      {R"({"container": {"image": "x", "mounts": {}}})",
       "run[0].container.mounts: expected an array"},
      {R"({"container": {"image": "x", "mounts": [{"source": "/data"}]}})",
       "run[0].container.mounts[0].target: is required"},
      {R"({"container": {"image": "x", "mounts": [{"source": "/a", "target": "/b",
                                                   "read_only": "yes"}]}})",
       "run[0].container.mounts[0].read_only: expected true or false"},
      {R"({"container": {"image": "x", "entrypoint": "sh"}})",
       "run[0].container.entrypoint: expected an array of strings"},
      {R"({"container": {"image": "x", "env": {"A": 1}}})",
       "run[0].container.env.A: expected a string"},
  };
  for (const auto& [body, error] : cases) {
    Result<TaskLaunch> parsed = Parse(json::parse(body));
    ASSERT_FALSE(parsed.ok()) << body;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << body;
    EXPECT_THAT(parsed.status().message(), HasSubstr(error)) << body;
  }
}

}  // namespace
}  // namespace berth::protocol

namespace berth::protocol {
namespace {

TEST(TaskLaunchJsonTest, AnEarlySignalRoundTripsAndIsWrittenOnlyWhenSet) {
  TaskLaunch launch = Full();
  json without = json::object();
  AddTaskLaunchJson(launch, without);
  EXPECT_FALSE(without.contains("signal"));  // older agents refuse fields they do not know
  launch.signal = EarlySignal{"USR1", core::Duration::Seconds(90), true};
  Result<TaskLaunch> parsed = RoundTrip(launch);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, launch);
}

TEST(TaskLaunchJsonTest, AnEarlySignalDefaultsToSixtySecondsAndNamesABadSignal) {
  Result<EarlySignal> plain = ParseEarlySignal(json{{"name", "SIGUSR2"}}, "signal");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->name, "USR2");
  EXPECT_EQ(plain->before, core::Duration::Seconds(60));
  EXPECT_FALSE(plain->batch_only);
  Result<EarlySignal> bad = ParseEarlySignal(json{{"name", "USR9"}}, "signal");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("signal.name"));
  EXPECT_THAT(bad.status().message(), HasSubstr("USR9"));
}

}  // namespace
}  // namespace berth::protocol
