#include "store/record_json.h"

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/job_state.h"
#include "store/record_field_reader.h"

namespace berth::store {
namespace {

using nlohmann::json;

constexpr std::array<std::pair<DependencyKind, std::string_view>, 3> kDependencyWords = {{
    {DependencyKind::kAfterOk, "afterok"},
    {DependencyKind::kAfterAny, "afterany"},
    {DependencyKind::kAfterNotOk, "afternotok"},
}};
constexpr std::array<std::pair<Role, std::string_view>, 4> kRoleWords = {{
    {Role::kAdmin, "admin"},
    {Role::kUser, "user"},
    {Role::kAgent, "agent"},
    {Role::kMetrics, "metrics"},
}};

template <typename Enum, size_t N>
std::string_view WordOf(const std::array<std::pair<Enum, std::string_view>, N>& words, Enum value) {
  for (const auto& [candidate, word] : words) {
    if (candidate == value) return word;
  }
  return "unknown";
}
template <typename Enum, size_t N>
std::optional<Enum> ValueOf(const std::array<std::pair<Enum, std::string_view>, N>& words,
                            std::string_view word) {
  for (const auto& [value, candidate] : words) {
    if (candidate == word) return value;
  }
  return std::nullopt;
}

void ReadRequest(FieldReader& in, const std::string& path, Status& error, JobRequest& out) {
  out.name = in.String("name");
  out.command = in.Strings("command");
  out.script = in.String("script");
  out.tasks = in.Int32("tasks", out.tasks);
  out.task.gpu = core::MilliGpu(in.Int64("gpu_milli", out.task.gpu.value()));
  out.task.cpu = core::MilliCpu(in.Int64("cpu_milli", out.task.cpu.value()));
  out.task.memory = core::MemoryMiB(in.Int64("memory_mib", out.task.memory.value()));
  if (const json* shapes = in.Array("task_shapes")) {
    for (size_t i = 0; i < shapes->size(); ++i) {
      FieldReader shape((*shapes)[i], path + "task_shapes[" + std::to_string(i) + "].", error);
      out.task_shapes.push_back(core::TaskShape{core::MilliGpu(shape.Int64("gpu_milli", 0)),
                                                core::MilliCpu(shape.Int64("cpu_milli", 0)),
                                                core::MemoryMiB(shape.Int64("memory_mib", 0))});
    }
  }
  out.gpu_types = SplitModels(in.String("gpu_type"));
  out.constraint = in.String("constraint");
  out.nodelist = in.Strings("nodelist");
  out.exclude = in.Strings("exclude");
  out.wait_for_nodes = in.Bool("wait_for_nodes", out.wait_for_nodes);
  out.gpus_in_one_group = in.Bool("gpus_in_one_group", out.gpus_in_one_group);
  out.distinct_nodes = in.Bool("distinct_nodes", out.distinct_nodes);
  out.default_memory_per_cpu = in.Bool("default_memory_per_cpu", out.default_memory_per_cpu);
  if (const json* layout = in.Array("slurm_tasks_per_node")) {
    for (const json& count : *layout) {
      if (!count.is_number_integer()) {
        if (error.ok()) error = InvalidArgument(path + "slurm_tasks_per_node: expected integers");
        break;
      }
      out.slurm_tasks_per_node.push_back(count.get<int32_t>());
    }
  }
  out.priority = in.Int32("priority", out.priority);
  out.queue = in.String("queue");
  if (std::optional<int64_t> us = in.OptionalInt64("time_limit_us")) {
    out.time_limit = core::Duration::Micros(*us);
  }
  if (std::optional<int64_t> us = in.OptionalInt64("estimate_us")) {
    out.estimate = core::Duration::Micros(*us);
  }
  out.preemptible = in.Bool("preemptible", out.preemptible);
  out.grace = core::Duration::Micros(in.Int64("grace_us", out.grace.micros()));
  if (const json* dependencies = in.Array("depends_on")) {
    for (size_t i = 0; i < dependencies->size(); ++i) {
      FieldReader item((*dependencies)[i], path + "depends_on[" + std::to_string(i) + "].", error);
      Dependency dependency;
      dependency.kind =
          item.Word<DependencyKind>("kind", ParseDependencyKindWord, "afterok|afterany|afternotok")
              .value_or(dependency.kind);
      dependency.job = core::JobId(item.Int64("job", 0));
      out.depends_on.push_back(dependency);
    }
  }
  out.singleton = in.Bool("singleton", false);
  out.env = in.StringMap("env");
  out.workdir = in.String("workdir");
  out.output = in.String("output");
  out.error = in.String("error");
  out.append_output = in.Bool("append_output", out.append_output);
  out.retries = in.Int32("retries", out.retries);
  out.requeue = in.Bool("requeue", out.requeue);
  out.hold = in.Bool("hold", out.hold);
  out.batch = in.Bool("batch", out.batch);
  out.array_index = in.OptionalInt32("array_index");
  out.array_max_running = in.OptionalInt32("array_max_running");
  if (const json* container = in.Object("container")) {
    FieldReader box(*container, path + "container.", error);
    ContainerRequest request;
    request.image = box.String("image");
    if (const json* mounts = box.Array("mounts")) {
      for (size_t i = 0; i < mounts->size(); ++i) {
        FieldReader item((*mounts)[i], path + "container.mounts[" + std::to_string(i) + "].",
                         error);
        request.mounts.push_back(
            {item.String("source"), item.String("target"), item.Bool("read_only", false)});
      }
    }
    request.workdir = box.String("workdir");
    request.env = box.StringMap("env");
    request.entrypoint = box.Strings("entrypoint");
    request.mount_home = box.Bool("mount_home", false);
    request.pull = box.String("pull");
    out.container = std::move(request);
  }
  if (const json* signal = in.Object("signal")) {
    FieldReader early(*signal, path + "signal.", error);
    EarlySignalRequest request;
    request.name = early.String("name");
    request.before = core::Duration::Micros(early.Int64("before_us", request.before.micros()));
    request.batch_only = early.Bool("batch_only", false);
    out.signal = std::move(request);
  }
}

void ReadPlacement(FieldReader& in, const std::string& path, Status& error,
                   std::vector<TaskPlacementRecord>& out) {
  const json* placement = in.Array("placement");
  if (placement == nullptr) return;
  for (size_t i = 0; i < placement->size(); ++i) {
    const std::string task_path = path + "placement[" + std::to_string(i) + "].";
    FieldReader task_in((*placement)[i], task_path, error);
    TaskPlacementRecord task;
    task.node = task_in.String("node");
    if (const json* gpus = task_in.Array("gpus")) {
      for (size_t g = 0; g < gpus->size(); ++g) {
        const json& gpu = (*gpus)[g];
        if (!gpu.is_number_integer() || gpu.get<int64_t>() < 0 ||
            gpu.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
          task_in.Fail(task_path + "gpus[" + std::to_string(g) + "]", "a device index", gpu);
          break;
        }
        task.gpus.push_back(gpu.get<int32_t>());
      }
    }
    out.push_back(std::move(task));
  }
}

}  // namespace

std::string_view DependencyKindWord(DependencyKind kind) { return WordOf(kDependencyWords, kind); }
std::optional<DependencyKind> ParseDependencyKindWord(std::string_view word) {
  return ValueOf(kDependencyWords, word);
}
std::string_view RoleWord(Role role) { return WordOf(kRoleWords, role); }
std::optional<Role> ParseRoleWord(std::string_view word) { return ValueOf(kRoleWords, word); }

std::optional<core::NodeState> ParseNodeStateWord(std::string_view word) {
  for (core::NodeState state :
       {core::NodeState::kUp, core::NodeState::kDraining, core::NodeState::kDown}) {
    if (core::NodeStateName(state) == word) return state;
  }
  return std::nullopt;
}

namespace {
json ContainerRequestToJson(const ContainerRequest& container) {
  json mounts = json::array();
  for (const ContainerMount& mount : container.mounts) {
    mounts.push_back(
        {{"source", mount.source}, {"target", mount.target}, {"read_only", mount.read_only}});
  }
  return json{{"image", container.image},
              {"mounts", mounts},
              {"workdir", container.workdir},
              {"env", container.env},
              {"entrypoint", container.entrypoint},
              {"mount_home", container.mount_home},
              {"pull", container.pull}};
}
}  // namespace

json JobRequestToJson(const JobRequest& request) {
  json out = {
      {"name", request.name},
      {"command", request.command},
      {"script", request.script},
      {"tasks", request.tasks},
      {"gpu_milli", request.task.gpu.value()},
      {"cpu_milli", request.task.cpu.value()},
      {"memory_mib", request.task.memory.value()},
      {"gpu_type", JoinModels(request.gpu_types)},
      {"constraint", request.constraint},
      {"nodelist", request.nodelist},
      {"exclude", request.exclude},
      {"wait_for_nodes", request.wait_for_nodes},
      {"gpus_in_one_group", request.gpus_in_one_group},
      {"distinct_nodes", request.distinct_nodes},
      {"priority", request.priority},
      {"queue", request.queue},
      {"preemptible", request.preemptible},
      {"grace_us", request.grace.micros()},
      {"env", request.env},
      {"workdir", request.workdir},
      {"output", request.output},
      {"error", request.error},
      {"append_output", request.append_output},
      {"retries", request.retries},
      {"requeue", request.requeue},
      {"hold", request.hold},
  };
  if (!request.task_shapes.empty()) {
    json& shapes = out["task_shapes"] = json::array();
    for (const core::TaskShape& shape : request.task_shapes) {
      shapes.push_back({{"gpu_milli", shape.gpu.value()},
                        {"cpu_milli", shape.cpu.value()},
                        {"memory_mib", shape.memory.value()}});
    }
  }
  if (!request.slurm_tasks_per_node.empty()) {
    out["slurm_tasks_per_node"] = request.slurm_tasks_per_node;
  }
  if (request.default_memory_per_cpu) out["default_memory_per_cpu"] = true;
  if (request.batch) out["batch"] = true;
  if (request.time_limit) out["time_limit_us"] = request.time_limit->micros();
  if (request.estimate) out["estimate_us"] = request.estimate->micros();
  json dependencies = json::array();
  for (const Dependency& dependency : request.depends_on) {
    dependencies.push_back(
        {{"kind", DependencyKindWord(dependency.kind)}, {"job", core::Value(dependency.job)}});
  }
  out["depends_on"] = std::move(dependencies);
  if (request.singleton) out["singleton"] = true;
  if (request.array_index) out["array_index"] = *request.array_index;
  if (request.array_max_running) out["array_max_running"] = *request.array_max_running;
  if (request.container) out["container"] = ContainerRequestToJson(*request.container);
  if (request.signal) {
    out["signal"] = {{"name", request.signal->name},
                     {"before_us", request.signal->before.micros()},
                     {"batch_only", request.signal->batch_only}};
  }
  return out;
}

Result<JobRequest> JobRequestFromJson(const json& json_request) {
  Status error;
  FieldReader in(json_request, "", error);
  JobRequest request;
  ReadRequest(in, "", error, request);
  return Finish(std::move(request), error);
}

namespace {

json StepsToJson(const std::vector<StepRecord>& steps) {
  json out = json::array();
  for (const StepRecord& step : steps) {
    json tasks = json::array();
    for (const StepTaskRecord& task : step.tasks) {
      json entry = {{"rank", task.rank},
                    {"job_task", task.job_task},
                    {"node", task.node},
                    {"node_index", task.node_index},
                    {"local_id", task.local_id}};
      if (task.exit_code) entry["exit_code"] = *task.exit_code;
      if (task.signal) entry["signal"] = *task.signal;
      tasks.push_back(std::move(entry));
    }
    json entry = {{"id", step.id},
                  {"attempt", step.attempt},
                  {"command", step.command},
                  {"env", step.env},
                  {"nodes", step.nodes},
                  {"tasks", std::move(tasks)},
                  {"cancelled", step.cancelled}};
    if (step.start_time) entry["start_time"] = step.start_time->micros();
    if (step.end_time) entry["end_time"] = step.end_time->micros();
    out.push_back(std::move(entry));
  }
  return out;
}

json SignalsToJson(const std::vector<SignalRecord>& signals) {
  json out = json::array();
  for (const SignalRecord& signal : signals) {
    out.push_back({{"id", signal.id}, {"name", signal.name}, {"batch_only", signal.batch_only}});
  }
  return out;
}

void ReadSignals(FieldReader& in, Status& error, std::vector<SignalRecord>& out) {
  const json* signals = in.Array("signals");
  if (signals == nullptr) return;
  for (size_t i = 0; i < signals->size(); ++i) {
    FieldReader signal_in((*signals)[i], "signals[" + std::to_string(i) + "].", error);
    SignalRecord signal;
    signal.id = signal_in.Int64("id", 0);
    signal.name = signal_in.String("name");
    signal.batch_only = signal_in.Bool("batch_only", false);
    out.push_back(std::move(signal));
  }
}

void ReadSteps(FieldReader& in, Status& error, std::vector<StepRecord>& out) {
  const json* steps = in.Array("steps");
  if (steps == nullptr) return;
  for (size_t i = 0; i < steps->size(); ++i) {
    const std::string step_path = "steps[" + std::to_string(i) + "].";
    FieldReader step_in((*steps)[i], step_path, error);
    StepRecord step;
    step.id = step_in.Int32("id", 0);
    step.attempt = step_in.Int32("attempt", 0);
    step.command = step_in.Strings("command");
    step.env = step_in.StringMap("env");
    step.nodes = step_in.Strings("nodes");
    step.cancelled = step_in.Bool("cancelled", false);
    if (std::optional<int64_t> start = step_in.OptionalInt64("start_time")) {
      step.start_time = core::Time::FromMicros(*start);
    }
    if (std::optional<int64_t> end = step_in.OptionalInt64("end_time")) {
      step.end_time = core::Time::FromMicros(*end);
    }
    if (const json* tasks = step_in.Array("tasks")) {
      for (size_t t = 0; t < tasks->size(); ++t) {
        FieldReader task_in((*tasks)[t], step_path + "tasks[" + std::to_string(t) + "].", error);
        StepTaskRecord task;
        task.rank = task_in.Int32("rank", 0);
        task.job_task = task_in.Int32("job_task", 0);
        task.node = task_in.String("node");
        task.node_index = task_in.Int32("node_index", 0);
        task.local_id = task_in.Int32("local_id", 0);
        task.exit_code = task_in.OptionalInt32("exit_code");
        task.signal = task_in.OptionalInt32("signal");
        step.tasks.push_back(std::move(task));
      }
    }
    out.push_back(std::move(step));
  }
}

}  // namespace

json JobRecordToJson(const JobRecord& job) {
  json out = {
      {"id", core::Value(job.id)},
      {"user", job.user},
      {"request", JobRequestToJson(job.request)},
      {"state", core::JobStateName(job.state)},
      {"reason", core::JobReasonName(job.reason)},
      {"message", job.message},
      {"submit_time", job.submit_time.micros()},
      {"attempts", job.attempts},
      {"preemptions", job.preemptions},
      {"version", job.version},
  };
  if (job.array_parent) out["array_parent"] = core::Value(*job.array_parent);
  if (job.start_time) out["start_time"] = job.start_time->micros();
  if (job.end_time) out["end_time"] = job.end_time->micros();
  json placement = json::array();
  for (const TaskPlacementRecord& task : job.placement) {
    placement.push_back({{"node", task.node}, {"gpus", task.gpus}});
  }
  out["placement"] = std::move(placement);
  if (job.master_port) out["master_port"] = *job.master_port;
  if (job.exit_code) out["exit_code"] = *job.exit_code;
  if (job.signal) out["signal"] = *job.signal;
  if (job.peak_memory) out["peak_memory_mib"] = job.peak_memory->value();
  if (job.cpu_time) out["cpu_time_us"] = job.cpu_time->micros();
  if (job.last_checkpoint) out["last_checkpoint"] = job.last_checkpoint->micros();
  if (job.first_eta) {
    const FirstEtaRecord& eta = *job.first_eta;
    out["first_eta"] = {{"given_at", eta.given_at.micros()}, {"planned", eta.planned.micros()},
                        {"expected", eta.expected.micros()}, {"low", eta.low.micros()},
                        {"high", eta.high.micros()},         {"started", eta.started.micros()}};
  }
  if (!job.steps.empty()) out["steps"] = StepsToJson(job.steps);
  if (!job.signals.empty()) out["signals"] = SignalsToJson(job.signals);
  return out;
}

Result<JobRecord> JobRecordFromJson(const json& json_job) {
  Status error;
  FieldReader in(json_job, "", error);
  JobRecord job;
  job.id = core::JobId(in.Int64("id", 0));
  job.user = in.String("user");
  if (const json* request = in.Find("request")) {
    FieldReader request_in(*request, "request.", error);
    ReadRequest(request_in, "request.", error, job.request);
  }
  if (std::optional<int64_t> parent = in.OptionalInt64("array_parent")) {
    job.array_parent = core::JobId(*parent);
  }
  job.state = in.Word<core::JobState>("state", core::ParseJobState, "a job state")
                  .value_or(core::JobState::kPending);
  // A word this version does not know (a later one wrote it) reads as no
  // reason rather than failing the record: Recover must load every live job.
  job.reason = core::ParseJobReason(in.String("reason")).value_or(core::JobReason::kNone);
  job.message = in.String("message");
  job.submit_time = core::Time::FromMicros(in.Int64("submit_time", 0));
  if (std::optional<int64_t> us = in.OptionalInt64("start_time")) {
    job.start_time = core::Time::FromMicros(*us);
  }
  if (std::optional<int64_t> us = in.OptionalInt64("end_time")) {
    job.end_time = core::Time::FromMicros(*us);
  }
  ReadPlacement(in, "", error, job.placement);
  job.master_port = in.OptionalInt32("master_port");
  job.exit_code = in.OptionalInt32("exit_code");
  job.signal = in.OptionalInt32("signal");
  if (std::optional<int64_t> mib = in.OptionalInt64("peak_memory_mib")) {
    job.peak_memory = core::MemoryMiB(*mib);
  }
  if (std::optional<int64_t> us = in.OptionalInt64("cpu_time_us")) {
    job.cpu_time = core::Duration::Micros(*us);
  }
  if (std::optional<int64_t> us = in.OptionalInt64("last_checkpoint")) {
    job.last_checkpoint = core::Time::FromMicros(*us);
  }
  if (const json* eta = in.Find("first_eta")) {
    FieldReader eta_in(*eta, "first_eta.", error);
    auto at = [&](const char* field) { return core::Time::FromMicros(eta_in.Int64(field, 0)); };
    job.first_eta = FirstEtaRecord{at("given_at"), at("planned"), at("expected"),
                                   at("low"),      at("high"),    at("started")};
  }
  ReadSteps(in, error, job.steps);
  ReadSignals(in, error, job.signals);
  job.attempts = in.Int32("attempts", 0);
  job.preemptions = in.Int32("preemptions", 0);
  job.version = in.Int64("version", 0);
  return Finish(std::move(job), error);
}

json NodeRecordToJson(const NodeRecord& node) {
  json gpus = json::array();
  for (const core::GpuDevice& gpu : node.spec.gpus) {
    gpus.push_back({{"index", gpu.index},
                    {"interconnect_group", gpu.interconnect_group},
                    {"healthy", gpu.health == core::GpuHealth::kHealthy}});
  }
  return {
      {"name", node.name},
      {"address", node.address},
      {"logs_key", node.logs_key},
      {"spec",
       {
           {"name", node.spec.name},
           {"gpu_type", node.spec.gpu_type},
           {"gpus", std::move(gpus)},
           {"cpu_milli", node.spec.cpu.value()},
           {"memory_mib", node.spec.memory.value()},
           {"labels", node.spec.labels},
           {"features", node.spec.features},
           {"container_runtime", node.spec.container_runtime},
       }},
      {"state", core::NodeStateName(node.state)},
      {"drained", node.drained},
      {"last_heartbeat", node.last_heartbeat.micros()},
  };
}

Result<NodeRecord> NodeRecordFromJson(const json& json_node) {
  Status error;
  FieldReader in(json_node, "", error);
  NodeRecord node;
  node.name = in.String("name");
  node.address = in.String("address");
  node.logs_key = in.String("logs_key");
  if (const json* spec = in.Find("spec")) {
    FieldReader spec_in(*spec, "spec.", error);
    node.spec.name = spec_in.String("name");
    node.spec.gpu_type = spec_in.String("gpu_type");
    if (const json* gpus = spec_in.Array("gpus")) {
      for (size_t i = 0; i < gpus->size(); ++i) {
        FieldReader gpu_in((*gpus)[i], "spec.gpus[" + std::to_string(i) + "].", error);
        core::GpuDevice gpu;
        gpu.index = gpu_in.Int32("index", 0);
        gpu.interconnect_group = gpu_in.Int32("interconnect_group", 0);
        gpu.health =
            gpu_in.Bool("healthy", true) ? core::GpuHealth::kHealthy : core::GpuHealth::kUnhealthy;
        node.spec.gpus.push_back(gpu);
      }
    }
    node.spec.cpu = core::MilliCpu(spec_in.Int64("cpu_milli", 0));
    node.spec.memory = core::MemoryMiB(spec_in.Int64("memory_mib", 0));
    node.spec.labels = spec_in.StringMap("labels");
    const std::vector<std::string> features = spec_in.Strings("features");
    node.spec.features = {features.begin(), features.end()};
    node.spec.container_runtime = spec_in.String("container_runtime");
  }
  node.state = in.Word<core::NodeState>("state", ParseNodeStateWord, "up|draining|down")
                   .value_or(core::NodeState::kUp);
  node.drained = in.Bool("drained", false);
  node.last_heartbeat = core::Time::FromMicros(in.Int64("last_heartbeat", 0));
  return Finish(std::move(node), error);
}

json QueueGovernanceToJson(const core::QueueSpec& queue) {
  json out{{"shares", queue.shares},
           {"allow_users", queue.allow_users},
           {"allow_groups", queue.allow_groups},
           {"default", queue.is_default}};
  if (queue.max_gpus_per_user) out["max_gpu_milli_per_user"] = queue.max_gpus_per_user->value();
  if (queue.max_running_jobs_per_user) {
    out["max_running_jobs_per_user"] = *queue.max_running_jobs_per_user;
  }
  if (queue.max_priority) out["max_priority"] = *queue.max_priority;
  if (queue.max_time) out["max_time_us"] = queue.max_time->micros();
  if (queue.default_memory.per_gpu) {
    out["default_memory_per_gpu_mib"] = queue.default_memory.per_gpu->value();
  }
  if (queue.default_memory.per_cpu) {
    out["default_memory_per_cpu_mib"] = queue.default_memory.per_cpu->value();
  }
  return out;
}

Status QueueGovernanceFromJson(const json& json_queue, core::QueueSpec& queue) {
  Status error;
  FieldReader in(json_queue, "", error);
  queue.shares = in.Int64("shares", 1);
  if (std::optional<int64_t> gpus = in.OptionalInt64("max_gpu_milli_per_user")) {
    queue.max_gpus_per_user = core::MilliGpu(*gpus);
  }
  queue.max_running_jobs_per_user = in.OptionalInt64("max_running_jobs_per_user");
  queue.max_priority = in.OptionalInt32("max_priority");
  if (std::optional<int64_t> time = in.OptionalInt64("max_time_us")) {
    queue.max_time = core::Duration::Micros(*time);
  }
  queue.allow_users = in.Strings("allow_users");
  queue.allow_groups = in.Strings("allow_groups");
  queue.is_default = in.Bool("default", false);
  if (std::optional<int64_t> mib = in.OptionalInt64("default_memory_per_gpu_mib")) {
    queue.default_memory.per_gpu = core::MemoryMiB(*mib);
  }
  if (std::optional<int64_t> mib = in.OptionalInt64("default_memory_per_cpu_mib")) {
    queue.default_memory.per_cpu = core::MemoryMiB(*mib);
  }
  return error;
}

}  // namespace berth::store
