#include "server/job_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/submission_test_helpers.h"

namespace berth::server {
namespace {

using core::Duration;
using store::Dependency;
using store::DependencyKind;
using store::JobRequest;
using submission_test::ParseOne;
using submission_test::Rejection;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

core::JobId Id(int64_t id) { return core::JobId{id}; }

// --- what a valid body becomes ---

TEST(ParseSubmission, MinimalBodyIsOneTaskOnOneGpuWithDefaults) {
  const JobRequest request = ParseOne(R"({"command": ["sleep", "1"]})");
  JobRequest expected;
  expected.command = {"sleep", "1"};
  EXPECT_EQ(request, expected);
  EXPECT_EQ(request.tasks, 1);
  EXPECT_EQ(request.task.gpu, core::WholeGpus(1));
  EXPECT_EQ(request.task.cpu, core::MilliCpu(0));
  EXPECT_EQ(request.task.memory, core::MemoryMiB(0));
  EXPECT_EQ(request.grace, Duration::Seconds(30));
  EXPECT_TRUE(request.requeue);
  EXPECT_FALSE(request.time_limit.has_value());
  EXPECT_FALSE(request.array_index.has_value());

  Result<Submission> submission = ParseSubmission(R"({"command": ["sleep", "1"]})");
  ASSERT_TRUE(submission.ok());
  EXPECT_EQ(submission->idempotency_key, "");
}

// Issue 29: a Slurm job is a gang of one task per node on distinct nodes,
// with its Slurm task layout.
TEST(ParseSubmission, ASlurmJobHasDistinctNodesAndOneLayoutCountPerTask) {
  Result<Submission> submission = ParseSubmission(
      R"({"script": "#!/bin/sh\n", "tasks": 2, "gpus": 4, "distinct_nodes": true,
          "slurm_tasks_per_node": [4, 4]})");
  ASSERT_TRUE(submission.ok()) << submission.status().ToString();
  const JobRequest& request = submission->jobs[0];
  EXPECT_TRUE(request.distinct_nodes);
  EXPECT_EQ(request.slurm_tasks_per_node, (std::vector<int32_t>{4, 4}));

  EXPECT_EQ(Rejection(R"({"command": ["x"], "tasks": 2, "slurm_tasks_per_node": [4]})"),
            "slurm_tasks_per_node: one count per task (2), got 1");
  EXPECT_THAT(Rejection(R"({"command": ["x"], "slurm_tasks_per_node": [0]})"),
              HasSubstr("slurm_tasks_per_node[0]"));
  EXPECT_THAT(Rejection(R"({"command": ["x"], "distinct_nodes": "yes"})"),
              HasSubstr("distinct_nodes"));
}

// Issue 29: nodes of unequal shares (-N 2 --gpus=6 is 5 + 1 GPUs).
TEST(ParseSubmission, TasksOfTheirOwnShapesAreReadOnePerTask) {
  const JobRequest request = ParseOne(
      R"({"script": "#!/bin/sh\n", "tasks": 2, "gpus": 5, "cpus": 2, "distinct_nodes": true,
          "task_shapes": [{"gpus": 5, "memory_mib": 100}, {"gpus": 1, "cpus": 1}]})");
  ASSERT_EQ(request.task_shapes.size(), 2u);
  EXPECT_EQ(request.task_shapes[0],
            (core::TaskShape{core::WholeGpus(5), core::Cores(2), core::MemoryMiB(100)}));
  EXPECT_EQ(request.task_shapes[1],
            (core::TaskShape{core::WholeGpus(1), core::Cores(1), core::MemoryMiB(0)}));
  EXPECT_EQ(request.task,
            (core::TaskShape{core::WholeGpus(5), core::Cores(2), core::MemoryMiB(100)}))
      << "the largest of them";
  EXPECT_EQ(request.total_gpu(), core::WholeGpus(6));
  // Shapes all alike are a plain gang.
  const JobRequest alike = ParseOne(
      R"({"command": ["x"], "tasks": 2, "distinct_nodes": true,
          "task_shapes": [{"gpus": 3}, {"gpus": 3}]})");
  EXPECT_TRUE(alike.task_shapes.empty());
  EXPECT_EQ(alike.task.gpu, core::WholeGpus(3));

  EXPECT_EQ(Rejection(R"({"command": ["x"], "tasks": 2, "distinct_nodes": true,
                          "task_shapes": [{"gpus": 1}]})"),
            "task_shapes: one shape per task (2), got 1");
  EXPECT_EQ(Rejection(R"({"command": ["x"], "tasks": 2, "task_shapes": [{}, {}]})"),
            "task_shapes: tasks of different shapes run on distinct nodes; set distinct_nodes");
  EXPECT_EQ(Rejection(R"({"command": ["x"], "tasks": 2, "distinct_nodes": true,
                          "task_shapes": [{"gpus": 1}, {"gpu": 2}]})"),
            "unknown field 'task_shapes[1].gpu' (known: gpus, cpus, memory_mib)");
  EXPECT_THAT(Rejection(R"({"command": ["x"], "tasks": 2, "distinct_nodes": true,
                          "task_shapes": [{"gpus": -1}, {}]})"),
              HasSubstr("task_shapes[0].gpus"));
  EXPECT_THAT(Rejection(R"({"command": ["x"], "tasks": 2, "distinct_nodes": true,
                          "task_shapes": {"gpus": 1}})"),
              HasSubstr("task_shapes: expected an array of objects"));
  EXPECT_EQ(Rejection(R"({"command": ["x"], "tasks": 2, "distinct_nodes": true, "gpu_milli": 500,
                          "task_shapes": [{}, {}]})"),
            "task_shapes: not with gpu_milli (a share of one GPU)");
}

TEST(ParseSubmission, TheDefaultMemoryMayBePerCpuWhateverTheGpus) {
  EXPECT_TRUE(ParseOne(R"({"command": ["x"], "gpus": 8, "default_memory": "per_cpu"})")
                  .default_memory_per_cpu);
  EXPECT_FALSE(
      ParseOne(R"({"command": ["x"], "default_memory": "per_gpu"})").default_memory_per_cpu);
  EXPECT_EQ(Rejection(R"({"command": ["x"], "default_memory": "per_node"})"),
            "default_memory: must be per_gpu or per_cpu, got 'per_node'");
}

TEST(ParseSubmission, ZeroGpusIsACpuOnlyJob) {
  const JobRequest request = ParseOne(R"({"command": ["make"], "gpus": 0, "cpus": 4})");
  EXPECT_EQ(request.task.gpu, core::MilliGpu(0));
  EXPECT_EQ(request.task.cpu, core::Cores(4));
  EXPECT_TRUE(request.task.valid());
}

TEST(ParseSubmission, ReadsEveryField) {
  Result<Submission> submission = ParseSubmission(R"({
    "name": "train-llm",
    "command": ["python3", "train.py", "--lr", "3e-4"],
    "tasks": 4,
    "gpus": 8,
    "gpu_type": "H100-80GB",
    "constraint": "(nvlink|!spot)&ib",
    "nodelist": "gpu[01-03]",
    "exclude": ["gpu02"],
    "cpus": 12.5,
    "memory_mib": 65536,
    "priority": "high",
    "queue": "team-a.research_1",
    "time_limit_s": 86400,
    "estimate_s": 3600.25,
    "preemptible": true,
    "grace_s": 120,
    "depends_on": ["afterok:12", "afterany:13", "afternotok:14", 15, "16:afterany"],
    "env": {"HF_HOME": "/data/hf", "_X1": ""},
    "workdir": "/home/ada/run",
    "output": "%x-%j.out",
    "error": "logs/%u-%N.err",
    "open_mode": "append",
    "retries": 3,
    "requeue": false,
    "hold": true,
    "wait_for_nodes": true,
    "gpus_in_one_group": true,
    "idempotency_key": "a1b2-c3d4"
  })");
  ASSERT_TRUE(submission.ok()) << submission.status().ToString();
  ASSERT_EQ(submission->jobs.size(), 1u);
  EXPECT_EQ(submission->idempotency_key, "a1b2-c3d4");
  const JobRequest& request = submission->jobs[0];
  EXPECT_EQ(request.name, "train-llm");
  EXPECT_THAT(request.command, ElementsAre("python3", "train.py", "--lr", "3e-4"));
  EXPECT_EQ(request.script, "");
  EXPECT_EQ(request.tasks, 4);
  EXPECT_EQ(request.task.gpu, core::WholeGpus(8));
  EXPECT_THAT(request.gpu_types, ElementsAre("H100-80GB"));
  EXPECT_EQ(request.constraint, "(nvlink|!spot)&ib");
  EXPECT_THAT(request.nodelist, ElementsAre("gpu01", "gpu02", "gpu03"));
  EXPECT_THAT(request.exclude, ElementsAre("gpu02"));
  EXPECT_TRUE(request.wait_for_nodes);
  EXPECT_TRUE(request.gpus_in_one_group);
  EXPECT_EQ(request.task.cpu, core::MilliCpu(12500));
  EXPECT_EQ(request.task.memory, core::MemoryMiB(65536));
  EXPECT_EQ(request.priority, 100);
  EXPECT_EQ(request.queue, "team-a.research_1");
  EXPECT_EQ(request.time_limit, Duration::Days(1));
  EXPECT_EQ(request.estimate, Duration::Seconds(3600) + Duration::Millis(250));
  EXPECT_TRUE(request.preemptible);
  EXPECT_EQ(request.grace, Duration::Minutes(2));
  EXPECT_THAT(request.depends_on, ElementsAre(Dependency{DependencyKind::kAfterOk, Id(12)},
                                              Dependency{DependencyKind::kAfterAny, Id(13)},
                                              Dependency{DependencyKind::kAfterNotOk, Id(14)},
                                              Dependency{DependencyKind::kAfterOk, Id(15)},
                                              Dependency{DependencyKind::kAfterAny, Id(16)}));
  EXPECT_EQ(request.env,
            (std::map<std::string, std::string>{{"HF_HOME", "/data/hf"}, {"_X1", ""}}));
  EXPECT_EQ(request.workdir, "/home/ada/run");
  EXPECT_EQ(request.output, "%x-%j.out");
  EXPECT_EQ(request.error, "logs/%u-%N.err");
  EXPECT_TRUE(request.append_output);
  EXPECT_EQ(request.retries, 3);
  EXPECT_FALSE(request.requeue);
  EXPECT_TRUE(request.hold);
  EXPECT_FALSE(request.array_index.has_value());
}

TEST(ParseSubmission, GpuModelSetsKeepTheirOrderWithoutRepeats) {
  const JobRequest request =
      ParseOne(R"({"command": ["x"], "gpu_type": "A100-80GB|H100-80GB|A100-80GB"})");
  EXPECT_THAT(request.gpu_types, ElementsAre("A100-80GB", "H100-80GB"));
}

TEST(ParseSubmission, ScriptInsteadOfCommand) {
  const JobRequest request = ParseOne(R"({"script": "#!/bin/bash\necho hi\n"})");
  EXPECT_EQ(request.script, "#!/bin/bash\necho hi\n");
  EXPECT_TRUE(request.command.empty());
}

TEST(ParseSubmission, GpuMilliIsAShareOfOneGpu) {
  const JobRequest request = ParseOne(R"({"command": ["serve"], "gpu_milli": 250})");
  EXPECT_EQ(request.task.gpu, core::MilliGpu(250));
  EXPECT_TRUE(request.task.wants_share());
}

TEST(ParseSubmission, CpusAreExactMillicores) {
  const std::vector<std::pair<std::string, int64_t>> cases = {
      {"0", 0},        {"2", 2000},  {"0.5", 500},      {"0.1", 100},     {"0.001", 1},
      {"1.250", 1250}, {"1e-3", 1},  {"1.5E2", 150000}, {"0.30000", 300}, {"1024", 1024000},
      {"2.0", 2000},   {"0e400", 0}, {"100e-2", 1000},
  };
  for (const auto& [text, millis] : cases) {
    const JobRequest request = ParseOne(R"({"command": ["x"], "cpus": )" + text + "}");
    EXPECT_EQ(request.task.cpu, core::MilliCpu(millis)) << text;
  }
}

TEST(ParseSubmission, SecondsAreExactToTheMicrosecond) {
  EXPECT_EQ(ParseOne(R"({"command": ["x"], "time_limit_s": 0.000001})").time_limit,
            Duration::Micros(1));
  EXPECT_EQ(ParseOne(R"({"command": ["x"], "time_limit_s": 31536000})").time_limit,
            Duration::Days(365));
  EXPECT_EQ(ParseOne(R"({"command": ["x"], "grace_s": 0})").grace, Duration::Zero());
  EXPECT_EQ(ParseOne(R"({"command": ["x"], "estimate_s": 1.5e1})").estimate, Duration::Seconds(15));
}

TEST(ParseSubmission, PriorityClassesAndNumbers) {
  const std::vector<std::pair<std::string, int32_t>> cases = {
      {R"("low")", -100}, {R"("normal")", 0}, {R"("high")", 100},
      {"-1000", -1000},   {"1000", 1000},     {"7", 7},
  };
  for (const auto& [text, priority] : cases) {
    EXPECT_EQ(ParseOne(R"({"command": ["x"], "priority": )" + text + "}").priority, priority)
        << text;
  }
}

TEST(ParseSubmission, APriorityClassIsBoundByTheLimitAsItsNumberIs) {
  // Found by the fuzzer: "high" (100) passed a limit of 10.
  SubmissionLimits limits;
  limits.max_priority = 10;
  EXPECT_EQ(Rejection(R"({"command": ["x"], "priority": "high"})", limits),
            "priority: must be -10..10 or one of low, normal, high, got 'high' (100)");
  EXPECT_EQ(Rejection(R"({"command": ["x"], "priority": "low"})", limits),
            "priority: must be -10..10 or one of low, normal, high, got 'low' (-100)");
  EXPECT_EQ(ParseOne(R"({"command": ["x"], "priority": "normal"})", limits).priority, 0);
}

TEST(ParseSubmission, NullCountsAsAbsent) {
  const JobRequest request =
      ParseOne(R"({"command": ["x"], "script": null, "gpus": null, "name": null, "array": null})");
  EXPECT_EQ(request.task.gpu, core::WholeGpus(1));
  EXPECT_EQ(request.name, "");
}

TEST(ParseSubmission, UnicodeInNamesAndArgumentsIsKept) {
  const JobRequest request = ParseOne(R"({"command": ["echo", "h\u00e9"], "name": "caf\u00e9"})");
  EXPECT_EQ(request.command[1], "h\xc3\xa9");
  EXPECT_EQ(request.name, "caf\xc3\xa9");
}

// --- arrays ---

TEST(ParseSubmission, SingletonIsADependencyOnNoJob) {
  const JobRequest request = ParseOne(R"({"command": ["x"], "depends_on": ["singleton", 4]})");
  EXPECT_TRUE(request.singleton);
  EXPECT_THAT(request.depends_on, ElementsAre(Dependency{DependencyKind::kAfterOk, Id(4)}));
  EXPECT_FALSE(ParseOne(R"({"command": ["x"], "depends_on": [4]})").singleton);
}

TEST(ParseSubmission, ArrayExpandsToOneJobPerIndex) {
  Result<Submission> submission =
      ParseSubmission(R"({"command": ["x"], "array": "0-3%2", "name": "sweep"})");
  ASSERT_TRUE(submission.ok()) << submission.status().ToString();
  ASSERT_EQ(submission->jobs.size(), 4u);
  for (int32_t i = 0; i < 4; ++i) {
    const JobRequest& job = submission->jobs[static_cast<size_t>(i)];
    EXPECT_EQ(job.array_index, i);
    EXPECT_EQ(job.array_max_running, 2) << "every element keeps the %N";
    EXPECT_EQ(job.name, "sweep");
    EXPECT_THAT(job.command, ElementsAre("x"));
  }
}

TEST(ParseSubmission, ArrayWithoutLimitHasNoMaxRunning) {
  Result<Submission> submission = ParseSubmission(R"({"command": ["x"], "array": "1,3,5-7"})");
  ASSERT_TRUE(submission.ok()) << submission.status().ToString();
  std::vector<int32_t> indices;
  for (const JobRequest& job : submission->jobs) {
    indices.push_back(*job.array_index);
    EXPECT_FALSE(job.array_max_running.has_value());
  }
  EXPECT_THAT(indices, ElementsAre(1, 3, 5, 6, 7));
}

TEST(ParseSubmission, ArrayCopiesAreBoundedInTotalBytes) {
  SubmissionLimits limits;
  limits.max_array_total_bytes = 1000;
  const std::string body = R"({"command": ["x"], "array": "0-99"})";  // 35 bytes x 100
  EXPECT_EQ(Rejection(body, limits),
            "array: 100 jobs of a 35-byte request exceed the limit of 1000 bytes");
  limits.max_array_total_bytes = 3500;
  EXPECT_TRUE(ParseSubmission(body, limits).ok());
}

// --- the bad input suite ---

// Each row: a body, the field its message must start with, and a part of
// what the message must say.
struct BadInput {
  std::string label;
  std::string body;
  std::string field;  // the message starts with "<field>:"
  std::string says;
};

std::string Repeat(std::string_view text, size_t times, std::string_view separator = ",") {
  std::string out;
  for (size_t i = 0; i < times; ++i) {
    if (i > 0) out += separator;
    out += text;
  }
  return out;
}

std::vector<BadInput> BadInputs() {
  const std::string cmd = R"("command": ["x"])";
  auto with = [&](std::string_view fields) { return "{" + cmd + ", " + std::string(fields) + "}"; };
  return {
      // malformed bodies
      {"truncated", R"({"command": ["x"])", "body", "invalid JSON at byte"},
      {"trailing garbage", R"({"command": ["x"]} x)", "body", "invalid JSON at byte"},
      {"single quotes", R"({'command': ['x']})", "body", "invalid JSON at byte"},
      {"comment", R"({"command": ["x"] /* c */})", "body", "invalid JSON at byte"},
      {"trailing comma", R"({"command": ["x"],})", "body", "invalid JSON at byte"},
      {"bad utf-8", "{\"command\": [\"\xff\"]}", "body", "invalid JSON at byte"},
      {"raw control char", "{\"command\": [\"a\x01\"]}", "body", "invalid JSON at byte"},
      {"empty", "", "body", "empty"},
      {"not an object", R"(["sleep", "1"])", "body", "expected a JSON object, got array"},
      {"a string", R"("sleep 1")", "body", "expected a JSON object, got string"},
      {"nested too deep", with(R"("env": {"A": [[[[[[[[1]]]]]]]]})"), "body",
       "nested deeper than 8 levels"},
      {"duplicate field", R"({"command": ["x"], "tasks": 1, "tasks": 2})", "tasks",
       "duplicate field"},
      {"duplicate env key", with(R"("env": {"A": "1", "A": "2"})"), "env", "duplicate key 'A'"},
      // unknown fields
      {"unknown field", with(R"("gpu": 1)"), "unknown field 'gpu'",
       "(known: array, batch, command,"},
      {"camelCase", with(R"("timeLimit": 1)"), "unknown field 'timeLimit'", "time_limit_s"},
      {"long unknown field", with("\"" + std::string(300, 'k') + "\": 1"),
       "unknown field '" + std::string(64, 'k') + "...'", "(known:"},
      {"long nested duplicate",
       with(R"("env": {")" + std::string(300, 'e') + R"(": {")" + std::string(300, 'f') +
            R"(": {"b": 1, "b": 2}}})"),
       // Each key is cut to 64 characters, the whole label to 128.
       "env." + std::string(64, 'e') + "...." + std::string(56, 'f') + "...", "duplicate key 'b'"},
      // the program
      {"neither command nor script", R"({"tasks": 1})", "command", "required"},
      {"both command and script", R"({"command": ["x"], "script": "y"})", "command", "not both"},
      {"command not an array", R"({"command": "sleep 1"})", "command",
       "expected an array of strings, got string"},
      {"command empty", R"({"command": []})", "command", "must be 1..1024 arguments, got 0"},
      {"command element not a string", R"({"command": ["sleep", 1]})", "command[1]",
       "expected a string, got number 1"},
      {"program empty", R"({"command": ["", "x"]})", "command[0]", "must not be empty"},
      {"NUL in argument", R"({"command": ["a\u0000b"]})", "command[0]", "must not contain NUL"},
      {"script empty", R"({"script": ""})", "script", "must not be empty"},
      {"script not a string", R"({"script": ["x"]})", "script", "expected a string, got array"},
      // wrong types
      {"tasks as string", with(R"("tasks": "4")"), "tasks", "expected an integer, got string"},
      {"tasks as decimal", with(R"("tasks": 1.5)"), "tasks", "expected an integer, got number 1.5"},
      {"tasks as bool", with(R"("tasks": true)"), "tasks", "expected an integer, got boolean"},
      {"gpus as string", with(R"("gpus": "8")"), "gpus", "expected an integer, got string"},
      {"cpus as string", with(R"("cpus": "0.5")"), "cpus", "expected a number, got string"},
      {"memory as object", with(R"("memory_mib": {})"), "memory_mib",
       "expected an integer, got object"},
      {"preemptible as int", with(R"("preemptible": 1)"), "preemptible",
       "expected a boolean, got number 1"},
      {"hold as string", with(R"("hold": "yes")"), "hold", "expected a boolean, got string"},
      {"name as number", with(R"("name": 7)"), "name", "expected a string, got number 7"},
      {"env as array", with(R"("env": ["A=1"])"), "env",
       "expected an object of strings, got array"},
      {"env value as number", with(R"("env": {"A": 1})"), "env.A",
       "expected a string, got number 1"},
      {"depends_on as string", with(R"("depends_on": "afterok:1")"), "depends_on",
       "expected an array, got string"},
      {"array as number", with(R"("array": 10)"), "array", "expected a string, got number 10"},
      {"priority as bool", with(R"("priority": false)"), "priority",
       "expected an integer or a class name, got boolean"},
      // negative or absurd resources
      {"tasks 0", with(R"("tasks": 0)"), "tasks", "must be 1..1024, got 0"},
      {"tasks huge", with(R"("tasks": 1000000)"), "tasks", "must be 1..1024, got 1000000"},
      {"tasks beyond int64", with(R"("tasks": 99999999999999999999)"), "tasks",
       "must be 1..1024, got 99999999999999999999"},
      {"gpus absurd", with(R"("gpus": 100000)"), "gpus", "must be 0..64, got 100000"},
      {"gpus negative", with(R"("gpus": -1)"), "gpus", "must be 0..64, got -1"},
      {"gpus with gpu_milli", with(R"("gpus": 1, "gpu_milli": 500)"), "gpu_milli", "not both"},
      {"gpus 0 with gpu_milli", with(R"("gpus": 0, "gpu_milli": 500)"), "gpu_milli", "not both"},
      {"gpu_milli 0", with(R"("gpu_milli": 0)"), "gpu_milli", "must be 1..999, got 0"},
      {"gpu_milli 1000", with(R"("gpu_milli": 1000)"), "gpu_milli", "must be 1..999, got 1000"},
      {"gpu_type empty", with(R"("gpu_type": "")"), "gpu_type", "must not be empty"},
      {"gpu_type empty model", with(R"("gpu_type": "A100||H100")"), "gpu_type",
       "an empty model in 'A100||H100' (separate models with '|')"},
      {"gpu_type empty last model", with(R"("gpu_type": "A100|")"), "gpu_type",
       "an empty model in 'A100|'"},
      {"constraint bad", with(R"("constraint": "ib&")"), "constraint",
       "expected a feature name, '!' or '(', found the end at position 4 of 'ib&'"},
      {"constraint as array", with(R"("constraint": ["ib"])"), "constraint",
       "expected a string, got array"},
      {"nodelist unclosed", with(R"("nodelist": "gpu[01-04")"), "nodelist",
       "unclosed '[' in 'gpu[01-04'"},
      {"nodelist as number", with(R"("nodelist": 3)"), "nodelist",
       "expected a hostlist string or an array of node names, got number 3"},
      {"exclude item", with(R"("exclude": ["n1", 2])"), "exclude[1]",
       "expected a string, got number 2"},
      {"exclude huge", with(R"("exclude": "n[0-99999]")"), "exclude", "more than 4096 names"},
      {"wait_for_nodes as string", with(R"("wait_for_nodes": "yes")"), "wait_for_nodes",
       "expected a boolean, got string"},
      {"cpus negative", with(R"("cpus": -0.5)"), "cpus",
       "must be 0..1024 cores in steps of 0.001, got -0.5"},
      {"cpus too precise", with(R"("cpus": 0.0005)"), "cpus", "got 0.0005"},
      {"cpus absurd", with(R"("cpus": 1e30)"), "cpus", "got 1e30"},
      {"memory negative", with(R"("memory_mib": -1)"), "memory_mib", "must be 0..16777216, got -1"},
      {"time limit 0", with(R"("time_limit_s": 0)"), "time_limit_s",
       "must be more than 0 and at most 31536000 seconds"},
      {"time limit negative", with(R"("time_limit_s": -5)"), "time_limit_s", "got -5"},
      {"time limit over a year", with(R"("time_limit_s": 31536001)"), "time_limit_s",
       "got 31536001"},
      {"time limit too precise", with(R"("time_limit_s": 1.0000001)"), "time_limit_s",
       "got 1.0000001"},
      {"estimate over the limit", with(R"("time_limit_s": 60, "estimate_s": 61)"), "estimate_s",
       "must not exceed time_limit_s"},
      {"grace too long", with(R"("grace_s": 3601)"), "grace_s", "must be 0..3600 seconds"},
      {"retries negative", with(R"("retries": -1)"), "retries", "must be 0..100, got -1"},
      {"priority out of range", with(R"("priority": 5000)"), "priority",
       "must be -1000..1000 or one of low, normal, high, got 5000"},
      {"priority decimal", with(R"("priority": 1.5)"), "priority", "got 1.5"},
      {"priority unknown class", with(R"("priority": "urgent")"), "priority", "got 'urgent'"},
      // names and paths
      {"queue with space", with(R"("queue": "team a")"), "queue",
       "must be 1..64 characters of [A-Za-z0-9._-], got 'team a'"},
      {"queue empty", with(R"("queue": "")"), "queue", "got ''"},
      {"queue too long", with(R"("queue": ")" + std::string(65, 'q') + "\""), "queue",
       "1..64 characters"},
      {"name with newline", with(R"("name": "a\nb")"), "name",
       "must not contain control characters, got 'a\\x0ab'"},
      {"workdir relative", with(R"("workdir": "run")"), "workdir",
       "must be an absolute path, got 'run'"},
      {"output unknown pattern", with(R"("output": "run-%q.out")"), "output",
       "unknown pattern %q (known: %j %x %u %A %a %N %t %%)"},
      {"error trailing percent", with(R"("error": "x%")"), "error", "'%' at the end"},
      {"open mode unknown", with(R"("open_mode": "rewrite")"), "open_mode",
       "must be append or truncate, got 'rewrite'"},
      {"idempotency key empty", with(R"("idempotency_key": "")"), "idempotency_key",
       "must be 1..128 visible ASCII characters"},
      {"idempotency key too long", with(R"("idempotency_key": ")" + std::string(129, 'k') + "\""),
       "idempotency_key", "129 bytes, limit 128"},
      {"idempotency key with space", with(R"("idempotency_key": "a b")"), "idempotency_key",
       "got 'a b'"},
      // too-long strings, too many elements
      {"name too long", with(R"("name": ")" + std::string(257, 'n') + "\""), "name",
       "257 bytes, limit 256"},
      {"argument too long", R"({"command": ["x", ")" + std::string(4097, 'a') + "\"]}",
       "command[1]", "4097 bytes, limit 4096"},
      {"too many arguments", R"({"command": [)" + Repeat(R"("a")", 1025) + "]}", "command",
       "must be 1..1024 arguments, got 1025"},
      {"script too long", R"({"script": ")" + std::string((256 << 10) + 1, 's') + "\"}", "script",
       "262145 bytes, limit 262144"},
      {"too many env entries",
       with(R"("env": {)" +
            [] {
              std::string entries;
              for (int i = 0; i < 257; ++i) {
                entries += (i ? "," : "") + ("\"V" + std::to_string(i) + "\": \"1\"");
              }
              return entries;
            }() +
            "}"),
       "env", "257 entries, limit 256"},
      {"env value too long", with(R"("env": {"A": ")" + std::string(4097, 'v') + "\"}"), "env.A",
       "4097 bytes, limit 4096"},
      // environment names
      {"env key with dash", with(R"("env": {"A-B": "1"})"), "env", "invalid name 'A-B'"},
      {"env key with digit first", with(R"("env": {"1A": "1"})"), "env", "invalid name '1A'"},
      {"env key empty", with(R"("env": {"": "1"})"), "env", "invalid name ''"},
      {"env key with =", with(R"("env": {"A=B": "1"})"), "env", "invalid name 'A=B'"},
      {"BERTH_ env", with(R"("env": {"BERTH_JOB_ID": "1"})"), "env.BERTH_JOB_ID", "reserved"},
      {"CUDA_VISIBLE_DEVICES env", with(R"("env": {"CUDA_VISIBLE_DEVICES": "0"})"),
       "env.CUDA_VISIBLE_DEVICES", "reserved"},
      // arrays
      {"array decreasing", with(R"("array": "5-1")"), "array", "range 5-1 is decreasing"},
      {"array too large", with(R"("array": "0-99999")"), "array",
       "index 99999 is over the limit 9999"},
      {"array %0", with(R"("array": "1-3%0")"), "array", "must be 1..10000, got '0'"},
      {"array empty", with(R"("array": "")"), "array", "empty spec"},
      {"array garbage", with(R"("array": "a-b")"), "array", "got 'a-b'"},
      // dependencies
      {"dependency kind", with(R"("depends_on": ["afterwhen:3"])"), "depends_on[0]",
       "unknown kind 'afterwhen'"},
      {"dependency negative id", with(R"("depends_on": ["afterok:-1"])"), "depends_on[0]",
       "job id must be a positive integer, got '-1'"},
      {"dependency id 0", with(R"("depends_on": [0])"), "depends_on[0]",
       "must be a positive job id, got 0"},
      {"dependency negative integer", with(R"("depends_on": [3, -1])"), "depends_on[1]", "got -1"},
      {"dependency decimal", with(R"("depends_on": [1.5])"), "depends_on[0]",
       "expected an integer, got number 1.5"},
      {"dependency object", with(R"("depends_on": [{"id": 1}])"), "depends_on[0]",
       "expected a dependency string or a job id, got object"},
      {"dependency repeated", with(R"("depends_on": ["afterok:3", 3])"), "depends_on[1]",
       "job 3 already listed in depends_on[0]"},
      {"too many dependencies",
       with(R"("depends_on": [)" +
            [] {
              std::string ids;
              for (int i = 1; i <= 65; ++i) ids += (i > 1 ? "," : "") + std::to_string(i);
              return ids;
            }() +
            "]"),
       "depends_on", "65 entries, limit 64"},
  };
}

TEST(ParseSubmission, BadInputSuite) {
  for (const BadInput& bad : BadInputs()) {
    SCOPED_TRACE(bad.label);
    const std::string message = Rejection(bad.body);
    EXPECT_THAT(message, StartsWith(bad.field + (bad.field.starts_with("unknown") ? " " : ":")));
    EXPECT_THAT(message, HasSubstr(bad.says));
    // Safe to echo anywhere: printable ASCII only, and short.
    for (char c : message) {
      EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "unprintable byte in: " << message;
    }
    EXPECT_LE(message.size(), 512u) << message;
    // Deterministic: the same body gets the same words.
    EXPECT_EQ(Rejection(bad.body), message);
  }
}

TEST(ParseSubmission, ExactMessages) {
  EXPECT_EQ(Rejection(R"({"command": ["x"], "tasks": 0})"), "tasks: must be 1..1024, got 0");
  EXPECT_EQ(Rejection(R"({"command": ["x"], "tasks": "4"})"),
            "tasks: expected an integer, got string");
  EXPECT_EQ(Rejection(R"({"command": ["x"], "bogus": 1})"),
            "unknown field 'bogus' (known: array, batch, command, constraint, container, "
            "cpus, default_memory, depends_on, distinct_nodes, env, error, estimate_s, exclude, "
            "gpu_milli, "
            "gpu_type, gpus, gpus_in_one_group, grace_s, hold, idempotency_key, memory_mib, "
            "name, nodelist, open_mode, output, preemptible, priority, queue, requeue, "
            "retries, script, slurm_tasks_per_node, task_shapes, tasks, time_limit_s, "
            "time_limit_signal, "
            "wait_for_nodes, workdir)");
  EXPECT_EQ(Rejection(R"({"command": ["x"])"),
            "body: invalid JSON at byte 17: syntax error while parsing object - unexpected end "
            "of input; expected '}'");
  EXPECT_EQ(Rejection(R"({"command": ["x"], "env": {"BERTH_X": "1"}})"),
            "env.BERTH_X: reserved (Berth sets BERTH_* variables)");
}

TEST(ParseSubmission, HugeBodyIsRejectedBeforeParsing) {
  const std::string body(SubmissionLimits{}.max_body_bytes + 1, '[');
  EXPECT_EQ(Rejection(body), "body: 1048577 bytes, limit 1048576");
  SubmissionLimits small;
  small.max_body_bytes = 10;
  EXPECT_EQ(Rejection(R"({"command": ["sleep", "1"]})", small), "body: 27 bytes, limit 10");
}

TEST(ParseSubmission, DeepNestingIsRejectedWithoutRecursion) {
  const std::string body = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(Rejection(body), "body: nested deeper than 8 levels");
}

TEST(ParseSubmission, LimitsAreConfigurable) {
  SubmissionLimits limits;
  limits.max_tasks = 8;
  limits.max_gpus_per_task = 8;
  limits.max_array = 100;
  EXPECT_EQ(Rejection(R"({"command": ["x"], "tasks": 9})", limits), "tasks: must be 1..8, got 9");
  EXPECT_EQ(Rejection(R"({"command": ["x"], "gpus": 9})", limits), "gpus: must be 0..8, got 9");
  EXPECT_EQ(Rejection(R"({"command": ["x"], "array": "0-100"})", limits),
            "array: index 100 is over the limit 99");
}

TEST(ParseSubmission, TheFirstProblemInFieldOrderWinsWhateverTheKeyOrder) {
  // Two problems (tasks and queue); the message is about tasks either way.
  const std::string forward = R"({"command": ["x"], "tasks": 0, "queue": "a b"})";
  const std::string backward = R"({"queue": "a b", "tasks": 0, "command": ["x"]})";
  EXPECT_EQ(Rejection(forward), "tasks: must be 1..1024, got 0");
  EXPECT_EQ(Rejection(backward), Rejection(forward));
}

TEST(ParseSubmission, MessagesEscapeWhatTheyQuote) {
  // A raw byte 0xff inside a key cannot even be parsed; an escaped control
  // character in an unknown key is valid JSON and must come back escaped.
  const std::string message = Rejection(R"({"command": ["x"], "a\u0007\u00e9": 1})");
  EXPECT_THAT(message, StartsWith("unknown field 'a\\x07\\xc3\\xa9'"));
}

TEST(ParseSubmission, TimeLimitSignalMessagesEscapeWhatTheyQuote) {
  // time_limit_signal is read by the agents' protocol reader; what it
  // refuses, it quotes escaped too (the fuzzer found a raw \x01 here).
  EXPECT_EQ(Rejection(R"({"command": ["x"], "time_limit_signal": {"name": "U\u0001"}})"),
            "time_limit_signal.name: expected a signal name (USR1, SIGUSR1) or number (10), got "
            "'U\\x01'");
  EXPECT_EQ(Rejection(R"({"command": ["x"], "time_limit_signal": {"name": "USR1", "\u00e9": 1}})"),
            "time_limit_signal.\\xc3\\xa9: unknown field");
}

}  // namespace
}  // namespace berth::server
