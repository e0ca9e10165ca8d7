#include "protocol/report_json.h"

#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include "common/json_fields.h"
#include "core/node.h"  // kMaxGpusPerNode, a constant only
#include "protocol/seconds_json.h"

namespace berth::protocol {

using nlohmann::json;

namespace {

constexpr std::array<std::pair<TaskOutcome, std::string_view>, 7> kOutcomeNames{{
    {TaskOutcome::kExited, "exited"},
    {TaskOutcome::kStopped, "stopped"},
    {TaskOutcome::kTimeLimit, "time_limit"},
    {TaskOutcome::kOutOfMemory, "out_of_memory"},
    {TaskOutcome::kStartFailed, "start_failed"},
    {TaskOutcome::kLost, "lost"},
    {TaskOutcome::kLeaseExpired, "lease_expired"},
}};

// A node's word on a task is for people, not a channel for bulk data.
constexpr size_t kMaxTaskMessage = 1024;

json GpusJson(const std::vector<GpuReport>& gpus) {
  json out = json::array();
  for (const GpuReport& gpu : gpus) {
    out.push_back(
        {{"index", gpu.index}, {"group", gpu.interconnect_group}, {"healthy", gpu.healthy}});
  }
  return out;
}

Result<GpuReport> ParseGpu(const json& body, const std::string& path) {
  JsonFields gpu(body, path);
  BERTH_RETURN_IF_ERROR(gpu.CheckObject());
  BERTH_ASSIGN_OR_RETURN(int64_t index, gpu.Int("index", -1, 0, core::kMaxGpusPerNode - 1));
  BERTH_ASSIGN_OR_RETURN(int64_t group, gpu.Int("group", 0, 0, 1024));
  BERTH_ASSIGN_OR_RETURN(bool healthy, gpu.Bool("healthy", true));
  BERTH_RETURN_IF_ERROR(gpu.Finish());
  if (index < 0) return InvalidArgument(gpu.Name("index") + "is required");
  return GpuReport{static_cast<int32_t>(index), static_cast<int32_t>(group), healthy};
}

Result<std::vector<GpuReport>> ParseGpus(JsonFields& fields) {
  BERTH_ASSIGN_OR_RETURN(std::vector<GpuReport> gpus, fields.List<GpuReport>("gpus", ParseGpu));
  if (gpus.size() > static_cast<size_t>(core::kMaxGpusPerNode)) {
    return InvalidArgument(fields.Name("gpus") + "at most " +
                           std::to_string(core::kMaxGpusPerNode) + " GPUs");
  }
  return gpus;
}

Result<TaskReport> ParseTaskReport(const json& body, const std::string& path) {
  JsonFields task(body, path);
  BERTH_RETURN_IF_ERROR(task.CheckObject());
  TaskReport report;
  BERTH_ASSIGN_OR_RETURN(int64_t job, task.Int("job", -1, 1, INT64_MAX));
  BERTH_ASSIGN_OR_RETURN(int64_t index, task.Int("task", 0, 0, 1 << 20));
  BERTH_ASSIGN_OR_RETURN(int64_t attempt, task.Int("attempt", 0, 0, 1 << 20));
  BERTH_ASSIGN_OR_RETURN(std::string phase, task.String("phase", true));
  BERTH_ASSIGN_OR_RETURN(int64_t exit_code, task.Int("exit_code", -1000, -1000, 255));
  BERTH_ASSIGN_OR_RETURN(int64_t signal, task.Int("signal", 0, 0, 128));
  BERTH_ASSIGN_OR_RETURN(std::string outcome, task.String("outcome", false));
  BERTH_ASSIGN_OR_RETURN(report.message, task.String("message", false));
  BERTH_ASSIGN_OR_RETURN(int64_t peak_memory, task.Int("peak_memory_mib", -1, 0, int64_t{1} << 40));
  BERTH_ASSIGN_OR_RETURN(report.cpu_time, ReadSeconds(task, "cpu_time_s"));
  BERTH_ASSIGN_OR_RETURN(report.starting, task.String("starting", false));
  BERTH_ASSIGN_OR_RETURN(report.checkpoint_age, ReadSeconds(task, "checkpoint_age_s"));
  BERTH_RETURN_IF_ERROR(task.Finish());
  if (report.starting.size() > kMaxTaskMessage) {
    return InvalidArgument(task.Name("starting") + "at most " + std::to_string(kMaxTaskMessage) +
                           " bytes");
  }
  if (peak_memory >= 0) report.peak_memory = core::MemoryMiB(peak_memory);
  if (job < 1) return InvalidArgument(task.Name("job") + "is required");
  if (phase != "running" && phase != "exited") {
    return InvalidArgument(task.Name("phase") + "expected running or exited, got '" + phase + "'");
  }
  if (!outcome.empty()) {
    std::optional<TaskOutcome> parsed = ParseTaskOutcome(outcome);
    if (!parsed) {
      return InvalidArgument(task.Name("outcome") +
                             "expected exited, stopped, time_limit, out_of_memory, start_failed "
                             "or lost, got '" +
                             outcome + "'");
    }
    report.outcome = *parsed;
  }
  if (report.message.size() > kMaxTaskMessage) {
    return InvalidArgument(task.Name("message") + "at most " + std::to_string(kMaxTaskMessage) +
                           " bytes");
  }
  report.job = static_cast<core::JobId>(job);
  report.task = static_cast<int32_t>(index);
  report.attempt = static_cast<int32_t>(attempt);
  report.phase = phase == "running" ? TaskPhase::kRunning : TaskPhase::kExited;
  if (exit_code != -1000) report.exit_code = static_cast<int32_t>(exit_code);
  if (signal != 0) report.signal = static_cast<int32_t>(signal);
  if (report.phase == TaskPhase::kExited && !report.exit_code && !report.signal) {
    return InvalidArgument(task.Name("exit_code") + "an exited task needs exit_code or signal");
  }
  return report;
}

Result<StepTaskReport> ParseStepTaskReport(const json& body, const std::string& path) {
  JsonFields fields(body, path);
  BERTH_RETURN_IF_ERROR(fields.CheckObject());
  StepTaskReport report;
  BERTH_ASSIGN_OR_RETURN(int64_t job, fields.Int("job", -1, 1, INT64_MAX));
  BERTH_ASSIGN_OR_RETURN(int64_t index, fields.Int("task", 0, 0, 1 << 20));
  BERTH_ASSIGN_OR_RETURN(int64_t attempt, fields.Int("attempt", 0, 0, 1 << 20));
  BERTH_ASSIGN_OR_RETURN(int64_t step, fields.Int("step", -1, 0, 1 << 20));
  BERTH_ASSIGN_OR_RETURN(int64_t rank, fields.Int("rank", -1, 0, 1 << 20));
  BERTH_ASSIGN_OR_RETURN(int64_t exit_code, fields.Int("exit_code", -1000, -1000, 255));
  BERTH_ASSIGN_OR_RETURN(int64_t signal, fields.Int("signal", 0, 0, 128));
  BERTH_RETURN_IF_ERROR(fields.Finish());
  if (job < 1) return InvalidArgument(fields.Name("job") + "is required");
  if (step < 0) return InvalidArgument(fields.Name("step") + "is required");
  if (rank < 0) return InvalidArgument(fields.Name("rank") + "is required");
  if (exit_code == -1000 && signal == 0) {
    return InvalidArgument(fields.Name("exit_code") +
                           "an ended step task needs exit_code or signal");
  }
  report.job = static_cast<core::JobId>(job);
  report.task = static_cast<int32_t>(index);
  report.attempt = static_cast<int32_t>(attempt);
  report.step = static_cast<int32_t>(step);
  report.rank = static_cast<int32_t>(rank);
  if (exit_code != -1000) report.exit_code = static_cast<int32_t>(exit_code);
  if (signal != 0) report.signal = static_cast<int32_t>(signal);
  return report;
}

}  // namespace

std::string_view TaskOutcomeName(TaskOutcome outcome) {
  for (const auto& [value, name] : kOutcomeNames) {
    if (value == outcome) return name;
  }
  return "exited";
}

std::optional<TaskOutcome> ParseTaskOutcome(std::string_view name) {
  for (const auto& [value, text] : kOutcomeNames) {
    if (text == name) return value;
  }
  return std::nullopt;
}

json RegistrationJson(const NodeRegistration& registration) {
  return json{{"node", registration.node},
              {"address", registration.address},
              {"logs_key", registration.logs_key},
              {"gpu_type", registration.gpu_type},
              {"gpus", GpusJson(registration.gpus)},
              {"cpu_milli", registration.cpu.value()},
              {"memory_mib", registration.memory.value()},
              {"labels", registration.labels},
              {"features", registration.features},
              {"container_runtime", registration.container_runtime}};
}

Result<NodeRegistration> ParseRegistration(const json& body) {
  JsonFields fields(body, "");
  BERTH_RETURN_IF_ERROR(fields.CheckObject());
  NodeRegistration registration;
  BERTH_ASSIGN_OR_RETURN(registration.node, fields.String("node", true));
  BERTH_ASSIGN_OR_RETURN(registration.address, fields.String("address", false));
  BERTH_ASSIGN_OR_RETURN(registration.logs_key, fields.String("logs_key", false));
  BERTH_ASSIGN_OR_RETURN(registration.gpu_type, fields.String("gpu_type", false));
  BERTH_ASSIGN_OR_RETURN(registration.gpus, ParseGpus(fields));
  BERTH_ASSIGN_OR_RETURN(int64_t cpu, fields.Int("cpu_milli", 0, 0, int64_t{1} << 40));
  BERTH_ASSIGN_OR_RETURN(int64_t memory, fields.Int("memory_mib", 0, 0, int64_t{1} << 40));
  registration.cpu = core::MilliCpu(cpu);
  registration.memory = core::MemoryMiB(memory);
  BERTH_ASSIGN_OR_RETURN(registration.labels, fields.StringMap("labels"));
  BERTH_ASSIGN_OR_RETURN(registration.features, fields.Strings("features"));
  BERTH_ASSIGN_OR_RETURN(registration.container_runtime, fields.String("container_runtime", false));
  BERTH_RETURN_IF_ERROR(fields.Finish());
  if (registration.node.empty() || registration.node.size() > 64) {
    return InvalidArgument("node: 1..64 characters");
  }
  return registration;
}

json HeartbeatJson(const Heartbeat& heartbeat) {
  json tasks = json::array();
  for (const TaskReport& task : heartbeat.tasks) {
    json entry{{"job", core::Value(task.job)},
               {"task", task.task},
               {"attempt", task.attempt},
               {"phase", task.phase == TaskPhase::kRunning ? "running" : "exited"}};
    if (task.exit_code) entry["exit_code"] = *task.exit_code;
    if (task.signal) entry["signal"] = *task.signal;
    if (task.phase == TaskPhase::kExited) entry["outcome"] = TaskOutcomeName(task.outcome);
    if (!task.message.empty()) entry["message"] = task.message;
    if (!task.starting.empty()) entry["starting"] = task.starting;
    if (task.peak_memory) entry["peak_memory_mib"] = task.peak_memory->value();
    if (task.cpu_time) entry["cpu_time_s"] = SecondsJson(*task.cpu_time);
    if (task.checkpoint_age) entry["checkpoint_age_s"] = SecondsJson(*task.checkpoint_age);
    tasks.push_back(entry);
  }
  json out{{"node", heartbeat.node}, {"tasks", tasks}, {"gpus", GpusJson(heartbeat.gpus)}};
  if (!heartbeat.steps.empty()) {
    json steps = json::array();
    for (const StepTaskReport& step : heartbeat.steps) {
      json entry{{"job", core::Value(step.job)},
                 {"task", step.task},
                 {"attempt", step.attempt},
                 {"step", step.step},
                 {"rank", step.rank}};
      if (step.exit_code) entry["exit_code"] = *step.exit_code;
      if (step.signal) entry["signal"] = *step.signal;
      steps.push_back(entry);
    }
    out["steps"] = steps;
  }
  return out;
}

Result<Heartbeat> ParseHeartbeat(const json& body) {
  JsonFields fields(body, "");
  BERTH_RETURN_IF_ERROR(fields.CheckObject());
  Heartbeat heartbeat;
  BERTH_ASSIGN_OR_RETURN(heartbeat.node, fields.String("node", true));
  BERTH_ASSIGN_OR_RETURN(heartbeat.gpus, ParseGpus(fields));
  BERTH_ASSIGN_OR_RETURN(heartbeat.tasks, fields.List<TaskReport>("tasks", ParseTaskReport));
  BERTH_ASSIGN_OR_RETURN(heartbeat.steps,
                         fields.List<StepTaskReport>("steps", ParseStepTaskReport));
  BERTH_RETURN_IF_ERROR(fields.Finish());
  return heartbeat;
}

}  // namespace berth::protocol
