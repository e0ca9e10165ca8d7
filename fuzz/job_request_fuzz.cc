// libFuzzer target for the job submission parser: bytes go to
// ParseSubmission (with the default limits and with tight ones),
// ParseArraySpec and ParseDependency. Besides not crashing, hanging or
// leaking (ASan + UBSan watch), every answer must keep the parser's
// contract: an accepted submission satisfies the limits it was parsed with,
// a rejection is InvalidArgument with a short printable message, and the same
// bytes always get the same answer.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "server/job_request.h"

namespace {

using berth::Status;
using berth::StatusCode;
using berth::server::SubmissionLimits;
using berth::store::JobRequest;

void Require(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "job_request_fuzz: invariant broken: %s\n", what);
  std::abort();
}

void CheckRejection(const Status& status) {
  Require(status.code() == StatusCode::kInvalidArgument, "rejections are InvalidArgument");
  const std::string& message = status.message();
  Require(!message.empty() && message.size() <= 512, "messages are short and non-empty");
  for (char c : message) {
    Require(c >= 0x20 && c < 0x7f, "messages are printable ASCII");
  }
}

bool IsEnvName(const std::string& name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name) {
    const bool ok =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

void CheckProgram(const JobRequest& job, const SubmissionLimits& limits) {
  Require(job.command.empty() != job.script.empty(), "exactly one of command and script");
  Require(job.command.size() <= limits.max_command_args, "command within max_command_args");
  Require(job.command.empty() || !job.command.front().empty(), "the program is not empty");
  for (const std::string& arg : job.command) {
    Require(arg.size() <= limits.max_string, "arguments within max_string");
    Require(arg.find('\0') == std::string::npos, "no NUL in arguments");
  }
  Require(job.script.size() <= limits.max_script_bytes, "script within max_script_bytes");
  Require(job.name.size() <= limits.max_name_chars, "name within max_name_chars");
  Require(job.workdir.empty() || job.workdir.front() == '/', "workdir is absolute");
}

void CheckResources(const JobRequest& job, const SubmissionLimits& limits) {
  Require(job.tasks >= 1 && job.tasks <= limits.max_tasks, "tasks within limits");
  Require(job.task.valid(), "the task shape is valid");
  Require(job.task.gpu.value() <= int64_t{limits.max_gpus_per_task} * 1000, "gpus within limits");
  Require(job.task.cpu.value() <= limits.max_cpus * 1000, "cpus within limits");
  Require(job.task.memory.value() <= limits.max_memory_mib, "memory within limits");
}

void CheckScheduling(const JobRequest& job, const SubmissionLimits& limits) {
  Require(job.priority >= -limits.max_priority && job.priority <= limits.max_priority,
          "priority within limits");
  const auto max_time = berth::core::Duration::Seconds(limits.max_time_s);
  Require(!job.time_limit || (job.time_limit->micros() > 0 && *job.time_limit <= max_time),
          "time limit positive and bounded");
  Require(!job.estimate || (job.estimate->micros() > 0 && *job.estimate <= max_time),
          "estimate positive and bounded");
  Require(!job.time_limit || !job.estimate || *job.estimate <= *job.time_limit,
          "estimate within the time limit");
  Require(
      job.grace.micros() >= 0 && job.grace <= berth::core::Duration::Seconds(limits.max_grace_s),
      "grace bounded");
  Require(job.retries >= 0 && job.retries <= limits.max_retries, "retries within limits");
  Require(job.depends_on.size() <= static_cast<size_t>(limits.max_dependencies),
          "dependencies within limits");
  std::set<int64_t> ids;
  for (const auto& dependency : job.depends_on) {
    Require(berth::core::Value(dependency.job) >= 1, "dependency ids are positive");
    Require(ids.insert(berth::core::Value(dependency.job)).second, "dependencies are distinct");
  }
  Require(job.env.size() <= limits.max_env, "env within max_env");
  for (const auto& [name, value] : job.env) {
    Require(IsEnvName(name), "env names are valid");
    Require(!name.starts_with("BERTH_"), "BERTH_ is reserved");
    Require(value.size() <= limits.max_string, "env values within max_string");
  }
}

void CheckSubmission(std::string_view body, const SubmissionLimits& limits) {
  const auto first = berth::server::ParseSubmission(body, limits);
  const auto second = berth::server::ParseSubmission(body, limits);
  Require(first.ok() == second.ok(), "deterministic acceptance");
  if (!first.ok()) {
    CheckRejection(first.status());
    Require(first.status().message() == second.status().message(), "deterministic messages");
    return;
  }
  const auto& submission = *first;
  Require(submission.jobs == second->jobs, "deterministic jobs");
  Require(!submission.jobs.empty(), "at least one job");
  Require(submission.idempotency_key.size() <= 128, "idempotency key bounded");
  const bool array = submission.jobs.front().array_index.has_value();
  // Every element keeps the array's %N (array_max_running), the same for all.
  const auto max_running = submission.jobs.front().array_max_running;
  Require(array || (submission.jobs.size() == 1 && !max_running), "a plain job is one job");
  Require(!max_running || (*max_running >= 1 && *max_running <= limits.max_array),
          "%N within 1..max_array");
  for (const JobRequest& job : submission.jobs) {
    Require(job.array_max_running == max_running, "one %N for the whole array");
  }
  Require(submission.jobs.size() <= static_cast<size_t>(limits.max_array), "array within limits");
  int32_t previous = -1;
  for (const JobRequest& job : submission.jobs) {
    Require(job.array_index.has_value() == array, "every array job has an index");
    if (array) {
      Require(*job.array_index > previous && *job.array_index < limits.max_array,
              "array indices sorted, unique, within limits");
      previous = *job.array_index;
      JobRequest same = job;
      same.array_index = submission.jobs.front().array_index;
      Require(same == submission.jobs.front(), "array jobs differ only in their index");
    }
  }
  CheckProgram(submission.jobs.front(), limits);
  CheckResources(submission.jobs.front(), limits);
  CheckScheduling(submission.jobs.front(), limits);
}

void CheckArraySpec(std::string_view spec) {
  const auto parsed = berth::server::ParseArraySpec(spec);
  if (!parsed.ok()) return CheckRejection(parsed.status());
  const int32_t max_array = SubmissionLimits{}.max_array;
  Require(!parsed->first.empty(), "an array spec has indices");
  int32_t previous = -1;
  for (int32_t index : parsed->first) {
    Require(index > previous && index < max_array, "indices sorted, unique, within limits");
    previous = index;
  }
  Require(!parsed->second || (*parsed->second >= 1 && *parsed->second <= max_array),
          "%N within 1..max_array");
}

void CheckDependency(std::string_view text) {
  const auto parsed = berth::server::ParseDependency(text);
  if (!parsed.ok()) return CheckRejection(parsed.status());
  Require(berth::core::Value(parsed->job) >= 1, "dependency ids are positive");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  CheckSubmission(bytes, SubmissionLimits{});
  SubmissionLimits tight;
  tight.max_body_bytes = 2048;
  tight.max_string = 16;
  tight.max_name_chars = 8;
  tight.max_command_args = 4;
  tight.max_env = 2;
  tight.max_script_bytes = 32;
  tight.max_json_depth = 3;
  tight.max_tasks = 4;
  tight.max_gpus_per_task = 2;
  tight.max_cpus = 2;
  tight.max_memory_mib = 1024;
  tight.max_time_s = 100;
  tight.max_grace_s = 60;  // above the 30 s default, which no limit applies to
  tight.max_priority = 10;
  tight.max_retries = 2;
  tight.max_array = 16;
  tight.max_dependencies = 2;
  tight.max_array_total_bytes = 4096;
  CheckSubmission(bytes, tight);
  CheckArraySpec(bytes);
  CheckDependency(bytes);
  return 0;
}
