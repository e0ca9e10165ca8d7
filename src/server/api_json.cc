#include "server/api_json.h"

#include <charconv>
#include <set>

#include "common/time_format.h"

namespace berth::server {

using nlohmann::json;

namespace {

json TimeJson(const std::optional<core::Time>& time) {
  return time ? json(FormatRfc3339(*time)) : json(nullptr);
}

std::string_view DependencyKindName(store::DependencyKind kind) {
  switch (kind) {
    case store::DependencyKind::kAfterOk:
      return "afterok";
    case store::DependencyKind::kAfterAny:
      return "afterany";
    case store::DependencyKind::kAfterNotOk:
      return "afternotok";
  }
  return "afterok";
}

// Strict object reader: remembers which fields were read and rejects the rest.
class Fields {
 public:
  Fields(const json& body, std::string prefix) : body_(body), prefix_(std::move(prefix)) {}

  Status CheckObject() const {
    if (!body_.is_object()) return InvalidArgument(Name("") + "expected a JSON object");
    return Status::Ok();
  }
  const json* Get(const std::string& key) {
    known_.insert(key);
    auto it = body_.find(key);
    return it == body_.end() || it->is_null() ? nullptr : &*it;
  }
  Result<std::string> String(const std::string& key, bool required) {
    const json* value = Get(key);
    if (value == nullptr) {
      if (required) return InvalidArgument(Name(key) + "is required");
      return std::string();
    }
    if (!value->is_string()) return InvalidArgument(Name(key) + "expected a string");
    return value->get<std::string>();
  }
  Result<int64_t> Int(const std::string& key, int64_t fallback, int64_t lo, int64_t hi) {
    const json* value = Get(key);
    if (value == nullptr) return fallback;
    if (!value->is_number_integer()) return InvalidArgument(Name(key) + "expected an integer");
    const int64_t number = value->get<int64_t>();
    if (number < lo || number > hi) {
      return InvalidArgument(Name(key) + "must be " + std::to_string(lo) + ".." +
                             std::to_string(hi) + ", got " + std::to_string(number));
    }
    return number;
  }
  Result<bool> Bool(const std::string& key, bool fallback) {
    const json* value = Get(key);
    if (value == nullptr) return fallback;
    if (!value->is_boolean()) return InvalidArgument(Name(key) + "expected true or false");
    return value->get<bool>();
  }
  Status Finish() const {
    for (const auto& [key, value] : body_.items()) {
      if (!known_.contains(key)) return InvalidArgument(Name(key) + "unknown field");
    }
    return Status::Ok();
  }
  std::string Name(const std::string& key) const {
    std::string name = prefix_;
    if (!key.empty()) name += (name.empty() ? "" : ".") + key;
    return name.empty() ? "" : name + ": ";
  }

 private:
  const json& body_;
  std::string prefix_;
  std::set<std::string> known_;
};

Result<std::vector<GpuReport>> ParseGpus(Fields& fields) {
  std::vector<GpuReport> gpus;
  const json* list = fields.Get("gpus");
  if (list == nullptr) return gpus;
  if (!list->is_array()) return InvalidArgument(fields.Name("gpus") + "expected an array");
  if (list->size() > static_cast<size_t>(core::kMaxGpusPerNode)) {
    return InvalidArgument(fields.Name("gpus") + "at most " +
                           std::to_string(core::kMaxGpusPerNode) + " GPUs");
  }
  for (size_t i = 0; i < list->size(); ++i) {
    Fields gpu((*list)[i], fields.Name("gpus").substr(0, fields.Name("gpus").size() - 2) + "[" +
                               std::to_string(i) + "]");
    BERTH_RETURN_IF_ERROR(gpu.CheckObject());
    GpuReport report;
    BERTH_ASSIGN_OR_RETURN(int64_t index, gpu.Int("index", -1, 0, core::kMaxGpusPerNode - 1));
    BERTH_ASSIGN_OR_RETURN(int64_t group, gpu.Int("group", 0, 0, 1024));
    BERTH_ASSIGN_OR_RETURN(bool healthy, gpu.Bool("healthy", true));
    BERTH_RETURN_IF_ERROR(gpu.Finish());
    if (index < 0) return InvalidArgument(gpu.Name("index") + "is required");
    report.index = static_cast<int32_t>(index);
    report.interconnect_group = static_cast<int32_t>(group);
    report.healthy = healthy;
    gpus.push_back(report);
  }
  return gpus;
}

json TaskJson(const TaskAssignment& task) {
  const store::JobRequest& request = task.request;
  json out{{"job", core::Value(task.job)},
           {"task", task.task},
           {"attempt", task.attempt},
           {"user", task.user},
           {"name", request.name},
           {"command", request.command},
           {"script", request.script},
           {"env", request.env},
           {"workdir", request.workdir},
           {"gpus", task.gpus},
           {"world_size", task.world_size},
           {"master_addr", task.master_addr},
           {"master_port", task.master_port},
           {"node_rank", task.node_rank},
           {"local_rank", task.local_rank},
           {"local_world_size", task.local_world_size},
           {"grace_s", request.grace.seconds()}};
  out["time_limit_s"] = request.time_limit ? json(request.time_limit->seconds()) : json(nullptr);
  return out;
}

}  // namespace

json JobJson(const JobView& view, Reader reader, const core::PendingJob* pending) {
  const store::JobRecord& job = view.record;
  const store::JobRequest& request = job.request;
  json dependencies = json::array();
  for (const store::Dependency& dependency : request.depends_on) {
    dependencies.push_back(std::string(DependencyKindName(dependency.kind)) + ":" +
                           std::to_string(core::Value(dependency.job)));
  }
  json placement = json::array();
  for (const store::TaskPlacementRecord& task : job.placement) {
    placement.push_back({{"node", task.node}, {"gpus", task.gpus}});
  }
  json out{
      {"id", core::Value(job.id)},
      {"user", job.user},
      {"name", request.name},
      {"state", core::JobStateName(job.state)},
      {"reason", view.reason()},
      {"message", job.message},
      {"queue", request.queue},
      {"priority", request.priority},
      {"tasks", request.tasks},
      {"gpu_milli", request.task.gpu.value()},
      {"gpu_type", request.gpu_type},
      {"cpu_milli", request.task.cpu.value()},
      {"memory_mib", request.task.memory.value()},
      {"preemptible", request.preemptible},
      {"grace_s", request.grace.seconds()},
      {"retries", request.retries},
      {"requeue", request.requeue},
      {"depends_on", dependencies},
      {"submit_time", FormatRfc3339(job.submit_time)},
      {"start_time", TimeJson(job.start_time)},
      {"end_time", TimeJson(job.end_time)},
      {"placement", placement},
      {"attempts", job.attempts},
      {"preemptions", job.preemptions},
  };
  out["gpus"] =
      request.task.gpu.value() % 1000 == 0 ? json(request.task.gpu.value() / 1000) : json(nullptr);
  out["time_limit_s"] = request.time_limit ? json(request.time_limit->seconds()) : json(nullptr);
  out["estimate_s"] = request.estimate ? json(request.estimate->seconds()) : json(nullptr);
  out["exit_code"] = job.exit_code ? json(*job.exit_code) : json(nullptr);
  out["signal"] = job.signal ? json(*job.signal) : json(nullptr);
  out["array_parent"] = job.array_parent ? json(core::Value(*job.array_parent)) : json(nullptr);
  out["array_index"] = request.array_index ? json(*request.array_index) : json(nullptr);
  out["position"] = pending ? json(pending->position) : json(nullptr);
  out["eta"] = pending ? TimeJson(pending->eta) : json(nullptr);
  if (reader == Reader::kOwnerOrAdmin) {
    out["command"] = request.command;
    out["script"] = request.script;
    out["env"] = request.env;
    out["workdir"] = request.workdir;
  }
  return out;
}

json ExplanationJson(const Explanation& explanation, Reader reader) {
  json out{{"job", JobJson(explanation.job, reader)},
           {"reason", explanation.reason},
           {"message", explanation.message}};
  out["position"] = explanation.position ? json(*explanation.position) : json(nullptr);
  out["blocker"] = explanation.blocker ? json(core::Value(*explanation.blocker)) : json(nullptr);
  out["eta"] = TimeJson(explanation.eta);
  return out;
}

json NodeJson(const NodeView& node) {
  const store::NodeRecord& record = node.record;
  json gpus = json::array();
  for (const core::GpuDevice& gpu : record.spec.gpus) {
    json holder = nullptr;
    for (const auto& [job, indices] : node.jobs) {
      for (int32_t index : indices) {
        if (index == gpu.index) holder = core::Value(job);
      }
    }
    gpus.push_back({{"index", gpu.index},
                    {"group", gpu.interconnect_group},
                    {"healthy", gpu.health == core::GpuHealth::kHealthy},
                    {"job", holder}});
  }
  return json{{"name", record.name},
              {"address", record.address},
              {"state", record.drained && record.state == core::NodeState::kUp
                            ? "draining"
                            : std::string(core::NodeStateName(record.state))},
              {"drained", record.drained},
              {"gpu_type", record.spec.gpu_type},
              {"gpus", gpus},
              {"cpu_milli", record.spec.cpu.value()},
              {"memory_mib", record.spec.memory.value()},
              {"labels", record.spec.labels},
              {"last_heartbeat", FormatRfc3339(record.last_heartbeat)}};
}

json HistoryJson(const std::vector<HistorySample>& samples, core::Duration every, size_t capacity) {
  json out = json::array();
  for (const HistorySample& sample : samples) {
    const WaitHistogram& waits = sample.waits;
    out.push_back({{"time", sample.time.micros() / 1'000'000},
                   {"pending", sample.pending},
                   {"held", sample.held},
                   {"running", sample.running},
                   {"gpus_total", sample.gpus_total},
                   {"gpus_allocated", sample.gpus_allocated},
                   {"nodes_up", sample.nodes_up},
                   {"nodes_down", sample.nodes_down},
                   {"starts", waits.count()},
                   {"wait_sum_s", waits.sum().seconds()},
                   {"wait_max_s", waits.max().seconds()},
                   {"wait_buckets", waits.buckets()}});
  }
  return json{{"interval_s", every.seconds()},
              {"capacity", capacity},
              {"wait_bounds_s", WaitHistogram::kBoundsSeconds},
              {"samples", out}};
}

Result<NodeRegistration> ParseRegistration(const json& body) {
  Fields fields(body, "");
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
  if (const json* labels = fields.Get("labels")) {
    if (!labels->is_object()) return InvalidArgument("labels: expected an object of strings");
    for (const auto& [key, value] : labels->items()) {
      if (!value.is_string()) return InvalidArgument("labels." + key + ": expected a string");
      registration.labels[key] = value.get<std::string>();
    }
  }
  BERTH_RETURN_IF_ERROR(fields.Finish());
  if (registration.node.empty() || registration.node.size() > 64) {
    return InvalidArgument("node: 1..64 characters");
  }
  return registration;
}

Result<Heartbeat> ParseHeartbeat(const json& body) {
  Fields fields(body, "");
  BERTH_RETURN_IF_ERROR(fields.CheckObject());
  Heartbeat heartbeat;
  BERTH_ASSIGN_OR_RETURN(heartbeat.node, fields.String("node", true));
  BERTH_ASSIGN_OR_RETURN(heartbeat.gpus, ParseGpus(fields));
  if (const json* tasks = fields.Get("tasks")) {
    if (!tasks->is_array()) return InvalidArgument("tasks: expected an array");
    for (size_t i = 0; i < tasks->size(); ++i) {
      Fields task((*tasks)[i], "tasks[" + std::to_string(i) + "]");
      BERTH_RETURN_IF_ERROR(task.CheckObject());
      TaskReport report;
      BERTH_ASSIGN_OR_RETURN(int64_t job, task.Int("job", -1, 1, INT64_MAX));
      BERTH_ASSIGN_OR_RETURN(int64_t index, task.Int("task", 0, 0, 1 << 20));
      BERTH_ASSIGN_OR_RETURN(int64_t attempt, task.Int("attempt", 0, 0, 1 << 20));
      BERTH_ASSIGN_OR_RETURN(std::string phase, task.String("phase", true));
      BERTH_ASSIGN_OR_RETURN(int64_t exit_code, task.Int("exit_code", -1000, -1000, 255));
      BERTH_ASSIGN_OR_RETURN(int64_t signal, task.Int("signal", 0, 0, 128));
      BERTH_RETURN_IF_ERROR(task.Finish());
      if (job < 1) return InvalidArgument(task.Name("job") + "is required");
      if (phase != "running" && phase != "exited") {
        return InvalidArgument(task.Name("phase") + "expected running or exited, got '" + phase +
                               "'");
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
      heartbeat.tasks.push_back(report);
    }
  }
  BERTH_RETURN_IF_ERROR(fields.Finish());
  return heartbeat;
}

json DesiredJson(const DesiredState& desired) {
  json run = json::array();
  for (const TaskAssignment& task : desired.run) run.push_back(TaskJson(task));
  json stop = json::array();
  for (const TaskStop& task : desired.stop) {
    stop.push_back({{"job", core::Value(task.job)},
                    {"task", task.task},
                    {"attempt", task.attempt},
                    {"grace_s", task.grace.seconds()}});
  }
  return json{{"run", run}, {"stop", stop}};
}

json RegistrationJson(const NodeRegistration& registration) {
  json gpus = json::array();
  for (const GpuReport& gpu : registration.gpus) {
    gpus.push_back(
        {{"index", gpu.index}, {"group", gpu.interconnect_group}, {"healthy", gpu.healthy}});
  }
  return json{{"node", registration.node},
              {"address", registration.address},
              {"logs_key", registration.logs_key},
              {"gpu_type", registration.gpu_type},
              {"gpus", gpus},
              {"cpu_milli", registration.cpu.value()},
              {"memory_mib", registration.memory.value()},
              {"labels", registration.labels}};
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
    tasks.push_back(entry);
  }
  json gpus = json::array();
  for (const GpuReport& gpu : heartbeat.gpus) {
    gpus.push_back(
        {{"index", gpu.index}, {"group", gpu.interconnect_group}, {"healthy", gpu.healthy}});
  }
  return json{{"node", heartbeat.node}, {"tasks", tasks}, {"gpus", gpus}};
}

Result<DesiredState> ParseDesired(const json& body) {
  DesiredState desired;
  try {
    for (const json& task : body.at("run")) {
      TaskAssignment assignment;
      assignment.job = static_cast<core::JobId>(task.at("job").get<int64_t>());
      assignment.task = task.at("task").get<int32_t>();
      assignment.attempt = task.at("attempt").get<int32_t>();
      assignment.user = task.at("user").get<std::string>();
      assignment.request.name = task.at("name").get<std::string>();
      assignment.request.command = task.at("command").get<std::vector<std::string>>();
      assignment.request.script = task.at("script").get<std::string>();
      assignment.request.env = task.at("env").get<std::map<std::string, std::string>>();
      assignment.request.workdir = task.at("workdir").get<std::string>();
      assignment.gpus = task.at("gpus").get<std::vector<int32_t>>();
      assignment.world_size = task.at("world_size").get<int32_t>();
      assignment.master_addr = task.at("master_addr").get<std::string>();
      assignment.master_port = task.at("master_port").get<int32_t>();
      assignment.node_rank = task.at("node_rank").get<int32_t>();
      assignment.local_rank = task.at("local_rank").get<int32_t>();
      assignment.local_world_size = task.at("local_world_size").get<int32_t>();
      assignment.request.grace =
          core::Duration::Micros(static_cast<int64_t>(task.at("grace_s").get<double>() * 1e6));
      if (!task.at("time_limit_s").is_null()) {
        assignment.request.time_limit = core::Duration::Micros(
            static_cast<int64_t>(task.at("time_limit_s").get<double>() * 1e6));
      }
      desired.run.push_back(std::move(assignment));
    }
    for (const json& task : body.at("stop")) {
      desired.stop.push_back(TaskStop{
          static_cast<core::JobId>(task.at("job").get<int64_t>()), task.at("task").get<int32_t>(),
          task.at("attempt").get<int32_t>(),
          core::Duration::Micros(static_cast<int64_t>(task.at("grace_s").get<double>() * 1e6))});
    }
  } catch (const json::exception& error) {
    return InvalidArgument(std::string("desired state: ") + error.what());
  }
  return desired;
}

Result<std::vector<core::QueueSpec>> ParseQueues(const json& body) {
  Fields fields(body, "");
  BERTH_RETURN_IF_ERROR(fields.CheckObject());
  const json* list = fields.Get("queues");
  BERTH_RETURN_IF_ERROR(fields.Finish());
  if (list == nullptr || !list->is_array()) return InvalidArgument("queues: expected an array");
  if (list->size() > 10000) return InvalidArgument("queues: at most 10000");
  std::vector<core::QueueSpec> queues;
  for (size_t i = 0; i < list->size(); ++i) {
    Fields queue((*list)[i], "queues[" + std::to_string(i) + "]");
    BERTH_RETURN_IF_ERROR(queue.CheckObject());
    core::QueueSpec spec;
    BERTH_ASSIGN_OR_RETURN(spec.name, queue.String("name", true));
    BERTH_ASSIGN_OR_RETURN(spec.parent, queue.String("parent", false));
    BERTH_ASSIGN_OR_RETURN(int64_t guaranteed, queue.Int("guaranteed_gpus", 0, 0, 1 << 24));
    BERTH_ASSIGN_OR_RETURN(int64_t ceiling, queue.Int("ceiling_gpus", -1, 0, 1 << 24));
    BERTH_RETURN_IF_ERROR(queue.Finish());
    spec.guaranteed = core::WholeGpus(guaranteed);
    if (ceiling >= 0) spec.ceiling = core::WholeGpus(ceiling);
    queues.push_back(std::move(spec));
  }
  return queues;
}

Result<store::JobFilter> ParseJobFilter(const std::multimap<std::string, std::string>& params) {
  store::JobFilter filter;
  for (const auto& [key, value] : params) {
    if (key == "state") {
      std::optional<core::JobState> state = core::ParseJobState(value);
      if (!state) return InvalidArgument("state: unknown job state '" + value + "'");
      filter.state = state;
    } else if (key == "user") {
      filter.user = value;
    } else if (key == "queue") {
      filter.queue = value;
    } else if (key == "live") {
      if (value != "true" && value != "false")
        return InvalidArgument("live: expected true or false");
      filter.live_only = value == "true";
    } else if (key == "after" || key == "limit") {
      int64_t number = 0;
      const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
      if (error != std::errc() || end != value.data() + value.size() || number < 0) {
        return InvalidArgument(key + ": expected a non-negative integer, got '" + value + "'");
      }
      if (key == "after") {
        filter.after = static_cast<core::JobId>(number);
      } else {
        if (number < 1 || number > 1000) return InvalidArgument("limit: must be 1..1000");
        filter.limit = static_cast<int32_t>(number);
      }
    } else {
      return InvalidArgument("unknown query parameter '" + key +
                             "' (known: state, user, queue, live, after, limit)");
    }
  }
  return filter;
}

}  // namespace berth::server
