#include "server/api_json.h"

#include <charconv>

#include "common/json_fields.h"
#include "common/time_format.h"
#include "core/eta_interval.h"
#include "server/spec_text.h"

namespace berth::server {

using spec_text::Quote;

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

// The job's container as it was submitted (with the home mount the server
// resolved). Its image is anyone's to see; its env and paths only its
// owner's.
json ContainerJson(const store::ContainerRequest& container, Reader reader) {
  if (reader != Reader::kOwnerOrAdmin) return json{{"image", container.image}};
  json mounts = json::array();
  for (const store::ContainerMount& mount : container.mounts) {
    mounts.push_back(
        {{"source", mount.source}, {"target", mount.target}, {"read_only", mount.read_only}});
  }
  return json{{"image", container.image},
              {"mounts", mounts},
              {"workdir", container.workdir},
              {"env", container.env},
              {"entrypoint", container.entrypoint},
              {"mount_home", container.mount_home},
              {"pull", container.pull.empty() ? json(nullptr) : json(container.pull)}};
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
  if (request.singleton) dependencies.push_back("singleton");
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
      {"gpu_type", store::JoinModels(request.gpu_types)},
      {"constraint", request.constraint},
      {"nodelist", request.nodelist},
      {"exclude", request.exclude},
      {"wait_for_nodes", request.wait_for_nodes},
      {"gpus_in_one_group", request.gpus_in_one_group},
      {"distinct_nodes", request.distinct_nodes},
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
  if (!request.task_shapes.empty()) {
    json& shapes = out["task_shapes"] = json::array();
    for (const core::TaskShape& shape : request.task_shapes) {
      shapes.push_back({{"gpus", shape.whole_gpus()},
                        {"cpu_milli", shape.cpu.value()},
                        {"memory_mib", shape.memory.value()}});
    }
  }
  if (!request.slurm_tasks_per_node.empty()) {
    out["slurm_tasks_per_node"] = request.slurm_tasks_per_node;
  }
  if (request.default_memory_per_cpu) out["default_memory"] = "per_cpu";
  out["time_limit_s"] = request.time_limit ? json(request.time_limit->seconds()) : json(nullptr);
  out["estimate_s"] = request.estimate ? json(request.estimate->seconds()) : json(nullptr);
  out["exit_code"] = job.exit_code ? json(*job.exit_code) : json(nullptr);
  out["signal"] = job.signal ? json(*job.signal) : json(nullptr);
  out["time_limit_signal"] = request.signal ? json{{"name", request.signal->name},
                                                   {"before_s", request.signal->before.seconds()},
                                                   {"batch_only", request.signal->batch_only}}
                                            : json(nullptr);
  // What its last run used, measured in its tasks' cgroups.
  out["peak_memory_mib"] = job.peak_memory ? json(job.peak_memory->value()) : json(nullptr);
  out["cpu_time_s"] = job.cpu_time ? json(job.cpu_time->seconds()) : json(nullptr);
  // Its current (or last) run's last reported checkpoint.
  out["last_checkpoint"] = TimeJson(job.last_checkpoint);
  out["array_parent"] = job.array_parent ? json(core::Value(*job.array_parent)) : json(nullptr);
  out["array_index"] = request.array_index ? json(*request.array_index) : json(nullptr);
  out["array_max_running"] =
      request.array_max_running ? json(*request.array_max_running) : json(nullptr);
  out["batch"] = request.batch;
  out["position"] = pending ? json(pending->position) : json(nullptr);
  out["eta"] = pending ? TimeJson(pending->eta) : json(nullptr);
  // The 80% interval around the ETA (issue 30).
  const std::optional<core::EtaInterval> interval =
      pending ? pending->eta_interval : std::optional<core::EtaInterval>();
  out["eta_low"] = interval ? TimeJson(interval->low) : json(nullptr);
  out["eta_high"] = interval ? TimeJson(interval->high) : json(nullptr);
  // Once it started: the first ETA it was given while it waited, and how
  // that turned out by the rules the server's accuracy counts.
  if (const std::optional<store::FirstEtaRecord>& first = job.first_eta) {
    out["first_eta"] = {
        {"given_at", FormatRfc3339(first->given_at)},
        {"expected", FormatRfc3339(first->expected)},
        {"low", FormatRfc3339(first->low)},
        {"high", FormatRfc3339(first->high)},
        {"started", FormatRfc3339(first->started)},
        {"kept", core::EtaKept(first->given_at, first->expected, first->started)},
        {"inside", core::EtaInterval{first->low, first->high}.Contains(first->started)}};
  } else {
    out["first_eta"] = nullptr;
  }
  if (reader == Reader::kOwnerOrAdmin) {
    out["command"] = request.command;
    out["script"] = request.script;
    out["env"] = request.env;
    out["workdir"] = request.workdir;
    out["output"] = request.output;
    out["error"] = request.error;
    out["open_mode"] = request.append_output ? "append" : "truncate";
  }
  out["container"] = request.container ? ContainerJson(*request.container, reader) : json(nullptr);
  return out;
}

json NodeTallyJson(const core::NodeTally& tally) {
  json rejected = json::object();
  for (size_t r = 0; r < core::kNodeRejectionCount; ++r) {
    if (tally.rejected[r] == 0) continue;
    rejected[std::string(core::NodeRejectionName(static_cast<core::NodeRejection>(r)))] =
        tally.rejected[r];
  }
  return json{{"total", tally.nodes}, {"fit", tally.fit}, {"rejected", rejected}};
}

json ExplanationJson(const Explanation& explanation, Reader reader) {
  json out{{"job", JobJson(explanation.job, reader)},
           {"reason", explanation.reason},
           {"message", explanation.message}};
  out["position"] = explanation.position ? json(*explanation.position) : json(nullptr);
  out["blocker"] = explanation.blocker ? json(core::Value(*explanation.blocker)) : json(nullptr);
  out["eta"] = TimeJson(explanation.eta);
  const std::optional<core::EtaInterval>& interval = explanation.eta_interval;
  out["eta_low"] = interval ? TimeJson(interval->low) : json(nullptr);
  out["eta_high"] = interval ? TimeJson(interval->high) : json(nullptr);
  out["nodes"] = explanation.nodes ? NodeTallyJson(*explanation.nodes) : json(nullptr);
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
  return json{
      {"name", record.name},
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
      {"features", record.spec.features},
      {"container_runtime",
       record.spec.container_runtime.empty() ? json(nullptr) : json(record.spec.container_runtime)},
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

namespace {

// An integer field in lo..hi, or nullopt when absent.
Result<std::optional<int64_t>> OptionalInt(JsonFields& fields, const std::string& key, int64_t lo,
                                           int64_t hi) {
  if (fields.Get(key) == nullptr) return std::optional<int64_t>();
  BERTH_ASSIGN_OR_RETURN(const int64_t value, fields.Int(key, lo, lo, hi));
  return std::optional<int64_t>(value);
}

// The governance keys of one queue, as in the TOML's [[queues]].
Status ParseQueueGovernance(JsonFields& queue, core::QueueSpec& spec) {
  BERTH_ASSIGN_OR_RETURN(spec.is_default, queue.Bool("default", false));
  BERTH_ASSIGN_OR_RETURN(spec.shares, queue.Int("shares", 1, 1, 1'000'000));
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> gpus,
                         OptionalInt(queue, "max_gpus_per_user", 1, 1 << 24));
  if (gpus) spec.max_gpus_per_user = core::WholeGpus(*gpus);
  BERTH_ASSIGN_OR_RETURN(spec.max_running_jobs_per_user,
                         OptionalInt(queue, "max_running_jobs_per_user", 1, 1 << 24));
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> priority,
                         OptionalInt(queue, "max_priority", -1000, 1000));
  if (priority) spec.max_priority = static_cast<int32_t>(*priority);
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> time,
                         OptionalInt(queue, "max_time_s", 1, int64_t{10} * 365 * 86400));
  if (time) spec.max_time = core::Duration::Seconds(*time);
  BERTH_ASSIGN_OR_RETURN(spec.allow_users, queue.Strings("allow_users"));
  BERTH_ASSIGN_OR_RETURN(spec.allow_groups, queue.Strings("allow_groups"));
  // As the TOML's: at most a request's memory_mib (16 TiB).
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> per_gpu,
                         OptionalInt(queue, "default_memory_per_gpu_mib", 1, int64_t{16} << 20));
  if (per_gpu) spec.default_memory.per_gpu = core::MemoryMiB(*per_gpu);
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> per_cpu,
                         OptionalInt(queue, "default_memory_per_cpu_mib", 1, int64_t{16} << 20));
  if (per_cpu) spec.default_memory.per_cpu = core::MemoryMiB(*per_cpu);
  return Status::Ok();
}

}  // namespace

json QueueGovernanceJson(const core::QueueSpec& spec) {
  auto optional = [](const auto& value) { return value ? json(*value) : json(nullptr); };
  json out{{"default", spec.is_default},
           {"shares", spec.shares},
           {"max_running_jobs_per_user", optional(spec.max_running_jobs_per_user)},
           {"max_priority", optional(spec.max_priority)},
           {"allow_users", spec.allow_users},
           {"allow_groups", spec.allow_groups}};
  out["max_gpus_per_user"] =
      spec.max_gpus_per_user ? json(static_cast<double>(spec.max_gpus_per_user->value()) / 1000.0)
                             : json(nullptr);
  out["max_time_s"] = spec.max_time ? json(spec.max_time->micros() / 1'000'000) : json(nullptr);
  auto mib = [](const std::optional<core::MemoryMiB>& value) {
    return value ? json(value->value()) : json(nullptr);
  };
  out["default_memory_per_gpu_mib"] = mib(spec.default_memory.per_gpu);
  out["default_memory_per_cpu_mib"] = mib(spec.default_memory.per_cpu);
  return out;
}

Result<std::vector<core::QueueSpec>> ParseQueues(const json& body) {
  JsonFields fields(body, "");
  BERTH_RETURN_IF_ERROR(fields.CheckObject());
  const json* list = fields.Get("queues");
  BERTH_RETURN_IF_ERROR(fields.Finish());
  if (list == nullptr || !list->is_array()) return InvalidArgument("queues: expected an array");
  if (list->size() > 10000) return InvalidArgument("queues: at most 10000");
  std::vector<core::QueueSpec> queues;
  for (size_t i = 0; i < list->size(); ++i) {
    JsonFields queue((*list)[i], "queues[" + std::to_string(i) + "]");
    BERTH_RETURN_IF_ERROR(queue.CheckObject());
    core::QueueSpec spec;
    BERTH_ASSIGN_OR_RETURN(spec.name, queue.String("name", true));
    BERTH_ASSIGN_OR_RETURN(spec.parent, queue.String("parent", false));
    BERTH_ASSIGN_OR_RETURN(int64_t guaranteed, queue.Int("guaranteed_gpus", 0, 0, 1 << 24));
    BERTH_ASSIGN_OR_RETURN(int64_t ceiling, queue.Int("ceiling_gpus", -1, 0, 1 << 24));
    BERTH_RETURN_IF_ERROR(ParseQueueGovernance(queue, spec));
    BERTH_RETURN_IF_ERROR(queue.Finish());
    spec.guaranteed = core::WholeGpus(guaranteed);
    if (ceiling >= 0) spec.ceiling = core::WholeGpus(ceiling);
    queues.push_back(std::move(spec));
  }
  return queues;
}

Result<JobListQuery> ParseJobListQuery(const std::multimap<std::string, std::string>& params) {
  JobListQuery query;
  store::JobFilter& filter = query.filter;
  for (const auto& [key, value] : params) {
    if (key == "state") {
      std::optional<core::JobState> state = core::ParseJobState(value);
      if (!state) return InvalidArgument("state: unknown job state " + Quote(value));
      filter.state = state;
    } else if (key == "user") {
      filter.user = value;
    } else if (key == "queue") {
      filter.queue = value;
    } else if (key == "live" || key == "steps") {
      if (value != "true" && value != "false") {
        return InvalidArgument(key + ": expected true or false");
      }
      (key == "live" ? filter.live_only : query.with_steps) = value == "true";
    } else if (key == "after" || key == "limit") {
      int64_t number = 0;
      const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
      if (error != std::errc() || end != value.data() + value.size() || number < 0) {
        return InvalidArgument(key + ": expected a non-negative integer, got " + Quote(value));
      }
      if (key == "after") {
        filter.after = static_cast<core::JobId>(number);
      } else {
        if (number < 1 || number > 1000) return InvalidArgument("limit: must be 1..1000");
        filter.limit = static_cast<int32_t>(number);
      }
    } else {
      return InvalidArgument("unknown query parameter " + Quote(key) +
                             " (known: state, user, queue, live, after, limit, steps)");
    }
  }
  return query;
}

}  // namespace berth::server
