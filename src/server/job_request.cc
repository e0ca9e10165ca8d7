#include "server/job_request.h"

#include <algorithm>
#include <array>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "core/constraint.h"
#include "core/ids.h"
#include "core/resources.h"
#include "core/time.h"
#include "protocol/output_pattern.h"
#include "protocol/task_launch_json.h"
#include "server/container_request.h"
#include "server/hostlist.h"
#include "server/spec_text.h"
#include "server/strict_json.h"

namespace berth::server {
namespace {

using strict_json::Json;
using namespace spec_text;    // NOLINT: the parsers' shared vocabulary
using namespace strict_json;  // NOLINT: typed reads of the body's fields

// --- the schema ---

// Sorted, so that the "known:" list reads the same every time.
constexpr std::array<std::string_view, 38> kKnownFields = {
    "array",
    "batch",
    "command",
    "constraint",
    "container",
    "cpus",
    "default_memory",
    "depends_on",
    "distinct_nodes",
    "env",
    "error",
    "estimate_s",
    "exclude",
    "gpu_milli",
    "gpu_type",
    "gpus",
    "gpus_in_one_group",
    "grace_s",
    "hold",
    "idempotency_key",
    "memory_mib",
    "name",
    "nodelist",
    "open_mode",
    "output",
    "preemptible",
    "priority",
    "queue",
    "requeue",
    "retries",
    "script",
    "slurm_tasks_per_node",
    "task_shapes",
    "tasks",
    "time_limit_s",
    "time_limit_signal",
    "wait_for_nodes",
    "workdir",
};

static_assert(std::is_sorted(kKnownFields.begin(), kKnownFields.end()));

Status CheckKnownFields(const Json& body) {
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (std::binary_search(kKnownFields.begin(), kKnownFields.end(), it.key())) continue;
    std::string known;
    for (std::string_view field : kKnownFields) {
      known += (known.empty() ? "" : ", ") + std::string(field);
    }
    return InvalidArgument("unknown field " + Quote(it.key()) + " (known: " + known + ")");
  }
  return Status::Ok();
}

bool IsEnvName(std::string_view name) {
  auto letter = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  return !name.empty() && letter(name.front()) &&
         std::all_of(name.begin(), name.end(),
                     [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

// Reads one validated body into a JobRequest, field by field in a fixed
// order; the first problem is the answer.
class RequestReader {
 public:
  RequestReader(const Json& body, const SubmissionLimits& limits) : body_(body), limits_(limits) {}

  Result<Submission> Read(size_t body_bytes) {
    BERTH_RETURN_IF_ERROR(ReadProgram());
    BERTH_RETURN_IF_ERROR(ReadResources());
    BERTH_RETURN_IF_ERROR(ReadPlacement());
    BERTH_RETURN_IF_ERROR(ReadScheduling());
    BERTH_RETURN_IF_ERROR(ReadDependencies());
    BERTH_ASSIGN_OR_RETURN(auto array, ReadArray(body_bytes));
    BERTH_RETURN_IF_ERROR(ReadEnvironment());
    BERTH_RETURN_IF_ERROR(ReadOptions());
    BERTH_RETURN_IF_ERROR(ReadOutput());
    BERTH_RETURN_IF_ERROR(ReadContainer());

    Submission submission;
    if (const Json* key = Find("idempotency_key")) {
      BERTH_ASSIGN_OR_RETURN(submission.idempotency_key,
                             ReadString(*key, "idempotency_key", kMaxIdempotencyKey));
      const std::string& text = submission.idempotency_key;
      const bool visible =
          std::all_of(text.begin(), text.end(), [](char c) { return c > 0x20 && c < 0x7f; });
      if (text.empty() || !visible) {
        return InvalidArgument("idempotency_key: must be 1..128 visible ASCII characters, got " +
                               Quote(text));
      }
    }
    if (!array) {
      submission.jobs.push_back(std::move(request_));
      return submission;
    }
    submission.jobs.reserve(array->first.size());
    for (int32_t index : array->first) {
      submission.jobs.push_back(request_);
      submission.jobs.back().array_index = index;
      submission.jobs.back().array_max_running = array->second;
    }
    return submission;
  }

 private:
  static constexpr size_t kMaxIdempotencyKey = 128;
  static constexpr size_t kMaxConstraint = 1024;
  static constexpr size_t kMaxNodeText = 16 << 10;
  static constexpr size_t kMaxNodeNames = 4096;

  // The field's value, or nullptr when it is absent or null.
  const Json* Find(const char* field) const {
    const auto it = body_.find(field);
    return it == body_.end() || it->is_null() ? nullptr : &*it;
  }

  // name, then exactly one of command and script.
  Status ReadProgram() {
    if (const Json* name = Find("name")) {
      BERTH_ASSIGN_OR_RETURN(request_.name, ReadLabel(*name, "name", limits_.max_name_chars));
    }
    const Json* command = Find("command");
    const Json* script = Find("script");
    if (command != nullptr && script != nullptr) {
      return InvalidArgument("command: give 'command' or 'script', not both");
    }
    if (command == nullptr && script == nullptr) {
      return InvalidArgument("command: required (an argv array), or give 'script'");
    }
    if (script != nullptr) {
      BERTH_ASSIGN_OR_RETURN(request_.script,
                             ReadString(*script, "script", limits_.max_script_bytes));
      if (request_.script.empty()) return InvalidArgument("script: must not be empty");
      return Status::Ok();
    }
    if (!command->is_array()) return TypeError("command", "an array of strings", *command);
    if (command->empty() || command->size() > limits_.max_command_args) {
      return RangeError("command", "1.." + std::to_string(limits_.max_command_args) + " arguments",
                        std::to_string(command->size()));
    }
    for (size_t i = 0; i < command->size(); ++i) {
      const std::string field = "command[" + std::to_string(i) + "]";
      BERTH_ASSIGN_OR_RETURN(std::string arg, ReadString((*command)[i], field, limits_.max_string));
      request_.command.push_back(std::move(arg));
    }
    if (request_.command.front().empty()) {
      return InvalidArgument("command[0]: the program must not be empty");
    }
    return Status::Ok();
  }

  // tasks, gpus or gpu_milli, gpu_type, cpus, memory_mib.
  Status ReadResources() {
    if (const Json* tasks = Find("tasks")) {
      BERTH_ASSIGN_OR_RETURN(int64_t n, ReadInteger(*tasks, "tasks", 1, limits_.max_tasks));
      request_.tasks = static_cast<int32_t>(n);
    }
    const Json* gpus = Find("gpus");
    const Json* gpu_milli = Find("gpu_milli");
    if (gpus != nullptr && gpu_milli != nullptr) {
      return InvalidArgument(
          "gpu_milli: give 'gpus' (whole GPUs) or 'gpu_milli' (a share of one GPU), not both");
    }
    if (gpus != nullptr) {
      BERTH_ASSIGN_OR_RETURN(int64_t n, ReadInteger(*gpus, "gpus", 0, limits_.max_gpus_per_task));
      request_.task.gpu = core::WholeGpus(n);
    }
    if (gpu_milli != nullptr) {
      BERTH_ASSIGN_OR_RETURN(int64_t milli, ReadInteger(*gpu_milli, "gpu_milli", 1, 999));
      request_.task.gpu = core::MilliGpu(milli);
    }
    if (const Json* type = Find("gpu_type")) {
      BERTH_ASSIGN_OR_RETURN(request_.gpu_types, ReadModels(*type));
    }
    if (const Json* cpus = Find("cpus")) {
      BERTH_ASSIGN_OR_RETURN(request_.task.cpu, ReadCpus(*cpus, "cpus"));
    }
    if (const Json* memory = Find("memory_mib")) {
      BERTH_ASSIGN_OR_RETURN(request_.task.memory, ReadMemory(*memory, "memory_mib"));
    }
    // Which queue default a job asking no memory gets: per GPU for a job
    // with GPUs, else per CPU ("per_gpu"), or per CPU whatever its GPUs
    // ("per_cpu": Slurm's --exclusive).
    if (const Json* basis = Find("default_memory")) {
      BERTH_ASSIGN_OR_RETURN(std::string word, ReadString(*basis, "default_memory", 16));
      if (word != "per_gpu" && word != "per_cpu") {
        return RangeError("default_memory", "per_gpu or per_cpu", Quote(word));
      }
      request_.default_memory_per_cpu = word == "per_cpu";
    }
    return Status::Ok();
  }

  Result<core::MilliCpu> ReadCpus(const Json& value, const std::string& field) const {
    const std::string range = "0.." + std::to_string(limits_.max_cpus) + " cores in steps of 0.001";
    BERTH_ASSIGN_OR_RETURN(int64_t millis,
                           ReadDecimal(value, field, 3, 0, limits_.max_cpus * 1000, range));
    return core::MilliCpu(millis);
  }

  Result<core::MemoryMiB> ReadMemory(const Json& value, const std::string& field) const {
    BERTH_ASSIGN_OR_RETURN(int64_t mib, ReadInteger(value, field, 0, limits_.max_memory_mib));
    return core::MemoryMiB(mib);
  }

  // task_shapes: tasks of their own shapes (a Slurm job whose nodes get
  // unequal shares), each {gpus, cpus, memory_mib}, a field left out being
  // the job's. Read after the resources and distinct_nodes.
  Status ReadTaskShapes(const Json& shapes) {
    if (!shapes.is_array()) return TypeError("task_shapes", "an array of objects", shapes);
    if (shapes.size() != static_cast<size_t>(request_.tasks)) {
      return InvalidArgument("task_shapes: one shape per task (" + std::to_string(request_.tasks) +
                             "), got " + std::to_string(shapes.size()));
    }
    if (!request_.distinct_nodes) {
      return InvalidArgument(
          "task_shapes: tasks of different shapes run on distinct nodes; set distinct_nodes");
    }
    if (request_.task.wants_share()) {
      return InvalidArgument("task_shapes: not with gpu_milli (a share of one GPU)");
    }
    std::vector<core::TaskShape> read;
    for (size_t i = 0; i < shapes.size(); ++i) {
      const std::string at = "task_shapes[" + std::to_string(i) + "]";
      const Json& entry = shapes[i];
      if (!entry.is_object()) return TypeError(at, "an object", entry);
      core::TaskShape shape = request_.task;
      for (auto field = entry.begin(); field != entry.end(); ++field) {
        const std::string name = at + "." + field.key();
        if (field.key() == "gpus") {
          BERTH_ASSIGN_OR_RETURN(int64_t n,
                                 ReadInteger(*field, name, 0, limits_.max_gpus_per_task));
          shape.gpu = core::WholeGpus(n);
        } else if (field.key() == "cpus") {
          BERTH_ASSIGN_OR_RETURN(shape.cpu, ReadCpus(*field, name));
        } else if (field.key() == "memory_mib") {
          BERTH_ASSIGN_OR_RETURN(shape.memory, ReadMemory(*field, name));
        } else {
          return InvalidArgument("unknown field " + Quote(name) +
                                 " (known: gpus, cpus, memory_mib)");
        }
      }
      read.push_back(shape);
    }
    // Tasks all alike are a plain gang.
    request_.task = core::LargestShape(read);
    if (std::any_of(read.begin(), read.end(),
                    [&](const core::TaskShape& shape) { return shape != read.front(); })) {
      request_.task_shapes = std::move(read);
    }
    return Status::Ok();
  }

  // "A100-80GB|H100-80GB": models, any of which will do.
  Result<std::vector<std::string>> ReadModels(const Json& value) const {
    BERTH_ASSIGN_OR_RETURN(std::string text, ReadLabel(value, "gpu_type", limits_.max_name_chars));
    if (text.empty()) return InvalidArgument("gpu_type: must not be empty");
    std::vector<std::string> models;
    for (std::string& model : store::SplitModels(text)) {
      if (model.empty()) {
        return InvalidArgument("gpu_type: an empty model in " + Quote(text) +
                               " (separate models with '|')");
      }
      if (std::find(models.begin(), models.end(), model) == models.end()) {
        models.push_back(std::move(model));
      }
    }
    return models;
  }

  // constraint, nodelist, exclude, gpus_in_one_group, distinct_nodes,
  // slurm_tasks_per_node: where the job may run besides its model.
  Status ReadPlacement() {
    if (const Json* constraint = Find("constraint")) {
      BERTH_ASSIGN_OR_RETURN(request_.constraint,
                             ReadLabel(*constraint, "constraint", kMaxConstraint));
      BERTH_RETURN_IF_ERROR(core::FeatureExpression::Parse(request_.constraint).status());
    }
    if (const Json* nodes = Find("nodelist")) {
      BERTH_ASSIGN_OR_RETURN(request_.nodelist, ReadNodeNames(*nodes, "nodelist"));
    }
    if (const Json* nodes = Find("exclude")) {
      BERTH_ASSIGN_OR_RETURN(request_.exclude, ReadNodeNames(*nodes, "exclude"));
    }
    if (const Json* grouped = Find("gpus_in_one_group")) {
      BERTH_ASSIGN_OR_RETURN(request_.gpus_in_one_group, ReadBool(*grouped, "gpus_in_one_group"));
    }
    if (const Json* distinct = Find("distinct_nodes")) {
      BERTH_ASSIGN_OR_RETURN(request_.distinct_nodes, ReadBool(*distinct, "distinct_nodes"));
    }
    if (const Json* layout = Find("slurm_tasks_per_node")) {
      BERTH_RETURN_IF_ERROR(ReadSlurmLayout(*layout));
    }
    if (const Json* shapes = Find("task_shapes")) BERTH_RETURN_IF_ERROR(ReadTaskShapes(*shapes));
    return Status::Ok();
  }

  // One count of Slurm tasks per Berth task (one per node).
  Status ReadSlurmLayout(const Json& layout) {
    const std::string tasks = std::to_string(request_.tasks);
    if (!layout.is_array())
      return TypeError("slurm_tasks_per_node", "an array of integers", layout);
    if (layout.size() != static_cast<size_t>(request_.tasks)) {
      return InvalidArgument("slurm_tasks_per_node: one count per task (" + tasks + "), got " +
                             std::to_string(layout.size()));
    }
    for (size_t i = 0; i < layout.size(); ++i) {
      BERTH_ASSIGN_OR_RETURN(
          int64_t count, ReadInteger(layout[i], "slurm_tasks_per_node[" + std::to_string(i) + "]",
                                     1, limits_.max_tasks));
      request_.slurm_tasks_per_node.push_back(static_cast<int32_t>(count));
    }
    return Status::Ok();
  }

  // A Slurm hostlist ("gpu[01-04],gpu07") or an array of them.
  Result<std::vector<std::string>> ReadNodeNames(const Json& value, const char* field) const {
    std::string text;
    if (value.is_array()) {
      for (size_t i = 0; i < value.size(); ++i) {
        BERTH_ASSIGN_OR_RETURN(
            std::string item,
            ReadLabel(value[i], std::string(field) + "[" + std::to_string(i) + "]", kMaxNodeText));
        text += (text.empty() ? "" : ",") + item;
      }
    } else if (value.is_string()) {
      BERTH_ASSIGN_OR_RETURN(text, ReadLabel(value, field, kMaxNodeText));
    } else {
      return TypeError(field, "a hostlist string or an array of node names", value);
    }
    return ExpandHostlist(text, field, kMaxNodeNames);
  }

  enum class Zero { kAllowed, kRejected };
  // A number of seconds, exact to the microsecond, at most max_s.
  static Result<core::Duration> ReadSeconds(const Json& value, std::string_view field, Zero zero,
                                            int64_t max_s) {
    const std::string range =
        (zero == Zero::kAllowed ? Range(0, max_s)
                                : "more than 0 and at most " + std::to_string(max_s)) +
        " seconds, to the microsecond";
    BERTH_ASSIGN_OR_RETURN(int64_t micros,
                           ReadDecimal(value, field, 6, zero == Zero::kAllowed ? 0 : 1,
                                       max_s * kMicrosPerSecond, range));
    return core::Duration::Micros(micros);
  }

  // priority, queue, time_limit_s, estimate_s, preemptible, grace_s.
  Status ReadScheduling() {
    if (const Json* priority = Find("priority")) {
      BERTH_ASSIGN_OR_RETURN(request_.priority, ReadPriority(*priority));
    }
    if (const Json* queue = Find("queue")) {
      BERTH_ASSIGN_OR_RETURN(request_.queue, ReadString(*queue, "queue", limits_.max_string));
      if (!IsQueueName(request_.queue)) {
        return RangeError("queue", "1..64 characters of [A-Za-z0-9._-]", Quote(request_.queue));
      }
    }
    if (const Json* limit = Find("time_limit_s")) {
      BERTH_ASSIGN_OR_RETURN(request_.time_limit, ReadSeconds(*limit, "time_limit_s",
                                                              Zero::kRejected, limits_.max_time_s));
    }
    if (const Json* estimate = Find("estimate_s")) {
      BERTH_ASSIGN_OR_RETURN(request_.estimate, ReadSeconds(*estimate, "estimate_s",
                                                            Zero::kRejected, limits_.max_time_s));
      if (request_.time_limit && *request_.estimate > *request_.time_limit) {
        return InvalidArgument(
            "estimate_s: must not exceed time_limit_s (the job is stopped there)");
      }
    }
    if (const Json* preemptible = Find("preemptible")) {
      BERTH_ASSIGN_OR_RETURN(request_.preemptible, ReadBool(*preemptible, "preemptible"));
    }
    if (const Json* grace = Find("grace_s")) {
      BERTH_ASSIGN_OR_RETURN(request_.grace,
                             ReadSeconds(*grace, "grace_s", Zero::kAllowed, limits_.max_grace_s));
    }
    return Status::Ok();
  }

  Result<int32_t> ReadPriority(const Json& value) const {
    static constexpr std::array<std::pair<std::string_view, int32_t>, 3> kClasses = {
        {{"low", -100}, {"normal", 0}, {"high", 100}}};
    const std::string range =
        Range(-limits_.max_priority, limits_.max_priority) + " or one of low, normal, high";
    if (const auto* name = value.get_ptr<const Json::string_t*>()) {
      for (const auto& [class_name, priority] : kClasses) {
        if (*name != class_name) continue;
        // A class is a number too: the operator's limit binds it as well.
        if (std::abs(priority) > limits_.max_priority) {
          return RangeError("priority", range,
                            Quote(*name) + " (" + std::to_string(priority) + ")");
        }
        return priority;
      }
      return RangeError("priority", range, Quote(*name));
    }
    if (!IsNumber(value)) return TypeError("priority", "an integer or a class name", value);
    const Result<int64_t> number =
        ReadInteger(value, "priority", -limits_.max_priority, limits_.max_priority);
    if (!number.ok())
      return RangeError("priority", range, Printable(*NumberText(value), kQuotedChars));
    return static_cast<int32_t>(*number);
  }

  Status ReadDependencies() {
    const Json* list = Find("depends_on");
    if (list == nullptr) return Status::Ok();
    if (!list->is_array()) return TypeError("depends_on", "an array", *list);
    const auto max = static_cast<size_t>(std::max(limits_.max_dependencies, 0));
    if (list->size() > max) {
      return InvalidArgument("depends_on: " + std::to_string(list->size()) + " entries, limit " +
                             std::to_string(max));
    }
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string field = "depends_on[" + std::to_string(i) + "]";
      // Slurm's singleton names no job: every earlier job of its name and
      // user (the controller finds them when it checks).
      if (const auto* word = (*list)[i].get_ptr<const Json::string_t*>();
          word != nullptr && *word == "singleton") {
        request_.singleton = true;
        continue;
      }
      BERTH_ASSIGN_OR_RETURN(store::Dependency dependency, ReadDependency((*list)[i], field));
      for (size_t j = 0; j < request_.depends_on.size(); ++j) {
        if (request_.depends_on[j].job != dependency.job) continue;
        return InvalidArgument(field + ": job " + core::ToString(dependency.job) +
                               " already listed in depends_on[" + std::to_string(j) + "]");
      }
      request_.depends_on.push_back(dependency);
    }
    return Status::Ok();
  }

  static Result<store::Dependency> ReadDependency(const Json& value, const std::string& field) {
    if (const auto* text = value.get_ptr<const Json::string_t*>()) {
      Result<store::Dependency> dependency = ParseDependency(*text);
      if (!dependency.ok()) return InvalidArgument(field + ": " + dependency.status().message());
      return dependency;
    }
    if (!IsNumber(value)) return TypeError(field, "a dependency string or a job id", value);
    BERTH_ASSIGN_OR_RETURN(int64_t id,
                           ReadInteger(value, field, 1, kMaxJobId, "a positive job id"));
    return store::Dependency{store::DependencyKind::kAfterOk, core::JobId{id}};
  }

  using ArraySpec = std::pair<std::vector<int32_t>, std::optional<int32_t>>;
  Result<std::optional<ArraySpec>> ReadArray(size_t body_bytes) const {
    const Json* spec = Find("array");
    if (spec == nullptr) return std::optional<ArraySpec>();
    BERTH_ASSIGN_OR_RETURN(std::string text, ReadString(*spec, "array", kMaxArraySpecChars));
    Result<ArraySpec> array = ParseArraySpec(text, limits_.max_array);
    if (!array.ok()) return InvalidArgument("array: " + array.status().message());
    const size_t count = array->first.size();
    if (body_bytes > limits_.max_array_total_bytes / count) {
      return InvalidArgument("array: " + std::to_string(count) + " jobs of a " +
                             std::to_string(body_bytes) + "-byte request exceed the limit of " +
                             std::to_string(limits_.max_array_total_bytes) + " bytes");
    }
    return std::optional<ArraySpec>(std::move(*array));
  }

  Status ReadEnvironment() {
    const Json* env = Find("env");
    if (env == nullptr) return Status::Ok();
    if (!env->is_object()) return TypeError("env", "an object of strings", *env);
    if (env->size() > limits_.max_env) {
      return InvalidArgument("env: " + std::to_string(env->size()) + " entries, limit " +
                             std::to_string(limits_.max_env));
    }
    for (auto it = env->begin(); it != env->end(); ++it) {
      const std::string& name = it.key();
      if (!IsEnvName(name) || name.size() > limits_.max_name_chars) {
        return InvalidArgument("env: invalid name " + Quote(name) + " (must match " +
                               "[A-Za-z_][A-Za-z0-9_]*, at most " +
                               std::to_string(limits_.max_name_chars) + " characters)");
      }
      const std::string field = "env." + Printable(name, kQuotedChars);
      if (name.starts_with("BERTH_")) {
        return InvalidArgument(field + ": reserved (Berth sets BERTH_* variables)");
      }
      if (name == "CUDA_VISIBLE_DEVICES") {
        return InvalidArgument(field + ": reserved (the agent sets it from the placement)");
      }
      BERTH_ASSIGN_OR_RETURN(std::string text, ReadString(it.value(), field, limits_.max_string));
      request_.env.emplace(name, std::move(text));
    }
    return Status::Ok();
  }

  // output, error (protocol/output_pattern.h) and open_mode.
  Status ReadOutput() {
    for (const auto& [field, target] :
         {std::pair{"output", &request_.output}, std::pair{"error", &request_.error}}) {
      const Json* value = Find(field);
      if (value == nullptr) continue;
      BERTH_ASSIGN_OR_RETURN(*target, ReadString(*value, field, limits_.max_string));
      BERTH_RETURN_IF_ERROR(protocol::CheckOutputPattern(*target, field));
    }
    if (const Json* mode = Find("open_mode")) {
      BERTH_ASSIGN_OR_RETURN(std::string text, ReadString(*mode, "open_mode", 16));
      if (text != "append" && text != "truncate") {
        return RangeError("open_mode", "append or truncate", Quote(text));
      }
      request_.append_output = text == "append";
    }
    return Status::Ok();
  }

  // workdir, retries, requeue, hold, batch, wait_for_nodes, time_limit_signal.
  Status ReadOptions() {
    if (const Json* workdir = Find("workdir")) {
      BERTH_ASSIGN_OR_RETURN(request_.workdir, ReadString(*workdir, "workdir", limits_.max_string));
      if (!request_.workdir.starts_with('/')) {
        return RangeError("workdir", "an absolute path", Quote(request_.workdir));
      }
    }
    if (const Json* retries = Find("retries")) {
      BERTH_ASSIGN_OR_RETURN(int64_t n, ReadInteger(*retries, "retries", 0, limits_.max_retries));
      request_.retries = static_cast<int32_t>(n);
    }
    if (const Json* requeue = Find("requeue")) {
      BERTH_ASSIGN_OR_RETURN(request_.requeue, ReadBool(*requeue, "requeue"));
    }
    if (const Json* hold = Find("hold")) {
      BERTH_ASSIGN_OR_RETURN(request_.hold, ReadBool(*hold, "hold"));
    }
    if (const Json* batch = Find("batch")) {
      BERTH_ASSIGN_OR_RETURN(request_.batch, ReadBool(*batch, "batch"));
    }
    if (const Json* wait = Find("wait_for_nodes")) {
      BERTH_ASSIGN_OR_RETURN(request_.wait_for_nodes, ReadBool(*wait, "wait_for_nodes"));
    }
    if (const Json* signal = Find("time_limit_signal")) {
      // The agents' own reader: what the API accepts, a node can deliver.
      BERTH_ASSIGN_OR_RETURN(protocol::EarlySignal early,
                             protocol::ParseEarlySignal(*signal, "time_limit_signal"));
      request_.signal = store::EarlySignalRequest{early.name, early.before, early.batch_only};
    }
    return Status::Ok();
  }

  // container (container_request.h). The job's workdir is mounted into the
  // container at the same path, so it must be a host path the operator
  // allows as well.
  Status ReadContainer() {
    const Json* container = Find("container");
    if (container == nullptr) return Status::Ok();
    BERTH_ASSIGN_OR_RETURN(request_.container, ReadContainerRequest(*container, limits_.max_string,
                                                                    limits_.container_mounts));
    if (!request_.workdir.empty()) {
      BERTH_RETURN_IF_ERROR(
          CheckMountAllowed(request_.workdir, "workdir", limits_.container_mounts));
    }
    return Status::Ok();
  }

  const Json& body_;
  const SubmissionLimits& limits_;
  store::JobRequest request_;
};

Result<Submission> ParseValidated(std::string_view json_body, const SubmissionLimits& limits) {
  if (json_body.size() > limits.max_body_bytes) {
    return InvalidArgument("body: " + std::to_string(json_body.size()) + " bytes, limit " +
                           std::to_string(limits.max_body_bytes));
  }
  if (json_body.empty()) return InvalidArgument("body: empty; expected a JSON object");
  BERTH_ASSIGN_OR_RETURN(const Json body, strict_json::Parse(json_body, limits.max_json_depth));
  if (!body.is_object()) return TypeError("body", "a JSON object", body);
  BERTH_RETURN_IF_ERROR(CheckKnownFields(body));
  return RequestReader(body, limits).Read(json_body.size());
}

}  // namespace

Result<Submission> ParseSubmission(std::string_view json_body, const SubmissionLimits& limits) {
  // nlohmann::json reports failures by exception; none may leave this module.
  try {
    return ParseValidated(json_body, limits);
  } catch (const std::exception& e) {
    return Internal("body: the parser failed: " + Printable(e.what(), 160));
  }
}

}  // namespace berth::server
