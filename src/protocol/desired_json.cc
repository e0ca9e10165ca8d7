#include "protocol/desired_json.h"

#include <cstdint>
#include <string>

#include "common/json_fields.h"
#include "core/node.h"  // kMaxGpusPerNode, a constant only
#include "protocol/seconds_json.h"
#include "protocol/signal_name.h"
#include "protocol/task_launch_json.h"

namespace berth::protocol {

using nlohmann::json;

namespace {

constexpr int64_t kMaxIndex = 1 << 20;  // tasks, attempts, ranks

json AssignmentJson(const TaskAssignment& task) {
  json out{{"job", core::Value(task.job)},
           {"task", task.task},
           {"attempt", task.attempt},
           {"user", task.user},
           {"gpus", task.gpus},
           {"world_size", task.world_size},
           {"master_addr", task.master_addr},
           {"master_port", task.master_port},
           {"node_rank", task.node_rank},
           {"local_rank", task.local_rank},
           {"local_world_size", task.local_world_size}};
  AddTaskLaunchJson(task.launch, out);
  // Only when there are any: agents from before them refuse the field.
  if (!task.signals.empty()) {
    json signals = json::array();
    for (const SignalRequest& signal : task.signals) {
      signals.push_back(
          {{"id", signal.id}, {"name", signal.name}, {"batch_only", signal.batch_only}});
    }
    out["signals"] = std::move(signals);
  }
  if (!task.steps.empty()) {
    json steps = json::array();
    for (const StepLaunch& step : task.steps) {
      json entry{{"step", step.step}, {"rank", step.rank}, {"command", step.command}};
      if (!step.env.empty()) entry["env"] = step.env;
      if (step.cancel) entry["cancel"] = true;
      steps.push_back(entry);
    }
    out["steps"] = steps;
  }
  return out;
}

Result<SignalRequest> ParseSignalRequest(const json& body, const std::string& path) {
  JsonFields fields(body, path);
  BERTH_RETURN_IF_ERROR(fields.CheckObject());
  SignalRequest signal;
  BERTH_ASSIGN_OR_RETURN(signal.id, fields.Int("id", -1, 1, INT64_MAX));
  BERTH_ASSIGN_OR_RETURN(std::string name, fields.String("name", true));
  BERTH_ASSIGN_OR_RETURN(signal.batch_only, fields.Bool("batch_only", false));
  BERTH_RETURN_IF_ERROR(fields.Finish());
  if (signal.id < 1) return InvalidArgument(fields.Name("id") + "is required");
  std::optional<std::string> canonical = CanonicalSignalName(name);
  if (!canonical) {
    return InvalidArgument(fields.Name("name") + "expected " + kSignalExpected + ", got '" + name +
                           "'");
  }
  signal.name = *canonical;
  return signal;
}

Result<StepLaunch> ParseStepLaunch(const json& body, const std::string& path) {
  JsonFields fields(body, path);
  BERTH_RETURN_IF_ERROR(fields.CheckObject());
  StepLaunch step;
  BERTH_ASSIGN_OR_RETURN(int64_t id, fields.Int("step", -1, 0, kMaxIndex));
  BERTH_ASSIGN_OR_RETURN(int64_t rank, fields.Int("rank", -1, 0, kMaxIndex));
  BERTH_ASSIGN_OR_RETURN(step.command, fields.Strings("command"));
  BERTH_ASSIGN_OR_RETURN(step.env, fields.StringMap("env"));
  BERTH_ASSIGN_OR_RETURN(step.cancel, fields.Bool("cancel", false));
  BERTH_RETURN_IF_ERROR(fields.Finish());
  if (id < 0) return InvalidArgument(fields.Name("step") + "is required");
  if (rank < 0) return InvalidArgument(fields.Name("rank") + "is required");
  if (step.command.empty()) return InvalidArgument(fields.Name("command") + "is required");
  step.step = static_cast<int32_t>(id);
  step.rank = static_cast<int32_t>(rank);
  return step;
}

// job, task and attempt name the task: they are required. The rest take
// their defaults when absent.
Result<TaskAssignment> ParseAssignment(const json& body, const std::string& path) {
  JsonFields fields(body, path);
  BERTH_RETURN_IF_ERROR(fields.CheckObject());
  TaskAssignment task;
  BERTH_ASSIGN_OR_RETURN(int64_t job, fields.Int("job", -1, 1, INT64_MAX));
  BERTH_ASSIGN_OR_RETURN(int64_t index, fields.Int("task", -1, 0, kMaxIndex));
  BERTH_ASSIGN_OR_RETURN(int64_t attempt, fields.Int("attempt", -1, 0, kMaxIndex));
  BERTH_ASSIGN_OR_RETURN(task.user, fields.String("user", false));
  BERTH_ASSIGN_OR_RETURN(std::vector<int64_t> gpus,
                         fields.Ints("gpus", 0, core::kMaxGpusPerNode - 1));
  BERTH_ASSIGN_OR_RETURN(int64_t world_size, fields.Int("world_size", 1, 1, kMaxIndex));
  BERTH_ASSIGN_OR_RETURN(task.master_addr, fields.String("master_addr", false));
  BERTH_ASSIGN_OR_RETURN(int64_t master_port, fields.Int("master_port", 0, 0, 65535));
  BERTH_ASSIGN_OR_RETURN(int64_t node_rank, fields.Int("node_rank", 0, 0, kMaxIndex));
  BERTH_ASSIGN_OR_RETURN(int64_t local_rank, fields.Int("local_rank", 0, 0, kMaxIndex));
  BERTH_ASSIGN_OR_RETURN(int64_t local_world_size, fields.Int("local_world_size", 1, 1, kMaxIndex));
  BERTH_ASSIGN_OR_RETURN(task.launch, ParseTaskLaunch(fields));
  BERTH_ASSIGN_OR_RETURN(task.signals, fields.List<SignalRequest>("signals", ParseSignalRequest));
  BERTH_ASSIGN_OR_RETURN(task.steps, fields.List<StepLaunch>("steps", ParseStepLaunch));
  BERTH_RETURN_IF_ERROR(fields.Finish());
  if (job < 1) return InvalidArgument(fields.Name("job") + "is required");
  if (index < 0) return InvalidArgument(fields.Name("task") + "is required");
  if (attempt < 0) return InvalidArgument(fields.Name("attempt") + "is required");
  task.job = static_cast<core::JobId>(job);
  task.task = static_cast<int32_t>(index);
  task.attempt = static_cast<int32_t>(attempt);
  for (int64_t gpu : gpus) task.gpus.push_back(static_cast<int32_t>(gpu));
  task.world_size = static_cast<int32_t>(world_size);
  task.master_port = static_cast<int32_t>(master_port);
  task.node_rank = static_cast<int32_t>(node_rank);
  task.local_rank = static_cast<int32_t>(local_rank);
  task.local_world_size = static_cast<int32_t>(local_world_size);
  return task;
}

Result<TaskStop> ParseStop(const json& body, const std::string& path) {
  JsonFields fields(body, path);
  BERTH_RETURN_IF_ERROR(fields.CheckObject());
  BERTH_ASSIGN_OR_RETURN(int64_t job, fields.Int("job", -1, 1, INT64_MAX));
  BERTH_ASSIGN_OR_RETURN(int64_t index, fields.Int("task", -1, 0, kMaxIndex));
  BERTH_ASSIGN_OR_RETURN(int64_t attempt, fields.Int("attempt", -1, 0, kMaxIndex));
  BERTH_ASSIGN_OR_RETURN(std::optional<core::Duration> grace, ReadSeconds(fields, "grace_s"));
  BERTH_RETURN_IF_ERROR(fields.Finish());
  if (job < 1) return InvalidArgument(fields.Name("job") + "is required");
  if (index < 0) return InvalidArgument(fields.Name("task") + "is required");
  if (attempt < 0) return InvalidArgument(fields.Name("attempt") + "is required");
  // No grace given: stop at once, as fencing does.
  return TaskStop{static_cast<core::JobId>(job), static_cast<int32_t>(index),
                  static_cast<int32_t>(attempt), grace.value_or(core::Duration::Zero())};
}

}  // namespace

json DesiredJson(const DesiredState& desired) {
  json run = json::array();
  for (const TaskAssignment& task : desired.run) run.push_back(AssignmentJson(task));
  json stop = json::array();
  for (const TaskStop& task : desired.stop) {
    stop.push_back({{"job", core::Value(task.job)},
                    {"task", task.task},
                    {"attempt", task.attempt},
                    {"grace_s", SecondsJson(task.grace)}});
  }
  json out{{"run", run}, {"stop", stop}};
  if (desired.lease) out["lease_s"] = SecondsJson(*desired.lease);
  return out;
}

Result<DesiredState> ParseDesired(const json& body) {
  JsonFields fields(body, "");
  BERTH_RETURN_IF_ERROR(fields.CheckObject());
  DesiredState desired;
  BERTH_ASSIGN_OR_RETURN(desired.run, fields.List<TaskAssignment>("run", ParseAssignment));
  BERTH_ASSIGN_OR_RETURN(desired.stop, fields.List<TaskStop>("stop", ParseStop));
  BERTH_ASSIGN_OR_RETURN(desired.lease, ReadSeconds(fields, "lease_s"));
  BERTH_RETURN_IF_ERROR(fields.Finish());
  return desired;
}

}  // namespace berth::protocol
