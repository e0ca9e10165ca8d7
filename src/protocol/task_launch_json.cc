#include "protocol/task_launch_json.h"

#include <cstdint>
#include <string>

#include "common/printable.h"
#include "protocol/seconds_json.h"
#include "protocol/signal_name.h"

namespace berth::protocol {

using nlohmann::json;

namespace {

constexpr int64_t kMaxQuantity = int64_t{1} << 40;

// A refused value comes back in the message escaped and cut: it may be a
// user's bytes on their way to a terminal.
constexpr size_t kMaxEchoChars = 64;

json ContainerJson(const Container& container) {
  json mounts = json::array();
  for (const Mount& mount : container.mounts) {
    mounts.push_back(
        {{"source", mount.source}, {"target", mount.target}, {"read_only", mount.read_only}});
  }
  return json{{"image", container.image},
              {"mounts", mounts},
              {"workdir", container.workdir},
              {"env", container.env},
              {"entrypoint", container.entrypoint},
              {"pull", container.pull ? json(ImagePullName(*container.pull)) : json(nullptr)}};
}

Result<Mount> ParseMount(const json& body, const std::string& path) {
  JsonFields fields(body, path);
  BERTH_RETURN_IF_ERROR(fields.CheckObject());
  Mount mount;
  BERTH_ASSIGN_OR_RETURN(mount.source, fields.String("source", true));
  BERTH_ASSIGN_OR_RETURN(mount.target, fields.String("target", true));
  BERTH_ASSIGN_OR_RETURN(mount.read_only, fields.Bool("read_only", false));
  BERTH_RETURN_IF_ERROR(fields.Finish());
  return mount;
}

Result<Container> ParseContainer(const json& body, const std::string& path) {
  JsonFields fields(body, path);
  BERTH_RETURN_IF_ERROR(fields.CheckObject());
  Container container;
  BERTH_ASSIGN_OR_RETURN(container.image, fields.String("image", true));
  BERTH_ASSIGN_OR_RETURN(container.mounts, fields.List<Mount>("mounts", ParseMount));
  BERTH_ASSIGN_OR_RETURN(container.workdir, fields.String("workdir", false));
  BERTH_ASSIGN_OR_RETURN(container.env, fields.StringMap("env"));
  BERTH_ASSIGN_OR_RETURN(container.entrypoint, fields.Strings("entrypoint"));
  BERTH_ASSIGN_OR_RETURN(std::string pull, fields.String("pull", false));
  if (!pull.empty()) {
    container.pull = ParseImagePull(pull);
    if (!container.pull) {
      return InvalidArgument(fields.Name("pull") + "expected missing, never or always, got '" +
                             Printable(pull, kMaxEchoChars) + "'");
    }
  }
  BERTH_RETURN_IF_ERROR(fields.Finish());
  if (container.image.empty()) return InvalidArgument(fields.Name("image") + "must not be empty");
  return container;
}

json SlurmJson(const SlurmAllocation& slurm) {
  json out{{"nodes", slurm.nodes},
           {"tasks_per_node", slurm.tasks_per_node},
           {"partition", slurm.partition},
           {"cluster", slurm.cluster}};
  // Only for uneven shares: a node that predates them refuses the field.
  if (!slurm.cpus_per_node.empty()) out["cpus_per_node"] = slurm.cpus_per_node;
  return out;
}

Result<SlurmAllocation> ParseSlurm(const json& body, const std::string& path) {
  JsonFields fields(body, path);
  BERTH_RETURN_IF_ERROR(fields.CheckObject());
  SlurmAllocation slurm;
  BERTH_ASSIGN_OR_RETURN(slurm.nodes, fields.Strings("nodes"));
  BERTH_ASSIGN_OR_RETURN(std::vector<int64_t> layout, fields.Ints("tasks_per_node", 1, INT32_MAX));
  for (int64_t count : layout) slurm.tasks_per_node.push_back(static_cast<int32_t>(count));
  BERTH_ASSIGN_OR_RETURN(std::vector<int64_t> cpus, fields.Ints("cpus_per_node", 1, INT32_MAX));
  for (int64_t count : cpus) slurm.cpus_per_node.push_back(static_cast<int32_t>(count));
  BERTH_ASSIGN_OR_RETURN(slurm.partition, fields.String("partition", false));
  BERTH_ASSIGN_OR_RETURN(slurm.cluster, fields.String("cluster", false));
  BERTH_RETURN_IF_ERROR(fields.Finish());
  if (slurm.tasks_per_node.size() != slurm.nodes.size()) {
    return InvalidArgument(fields.Name("tasks_per_node") + "one count per node");
  }
  if (!slurm.cpus_per_node.empty() && slurm.cpus_per_node.size() != slurm.nodes.size()) {
    return InvalidArgument(fields.Name("cpus_per_node") + "one count per node");
  }
  return slurm;
}

Result<RunAs> ParseRunAs(const json& body, const std::string& path) {
  JsonFields fields(body, path);
  BERTH_RETURN_IF_ERROR(fields.CheckObject());
  RunAs run_as;
  BERTH_ASSIGN_OR_RETURN(run_as.user, fields.String("user", false));
  BERTH_RETURN_IF_ERROR(fields.Finish());
  return run_as;
}

Result<ResourceLimits> ParseLimits(const json& body, const std::string& path) {
  JsonFields fields(body, path);
  BERTH_RETURN_IF_ERROR(fields.CheckObject());
  BERTH_ASSIGN_OR_RETURN(int64_t cpu, fields.Int("cpu_milli", 0, 0, kMaxQuantity));
  BERTH_ASSIGN_OR_RETURN(int64_t memory, fields.Int("memory_mib", 0, 0, kMaxQuantity));
  BERTH_RETURN_IF_ERROR(fields.Finish());
  return ResourceLimits{core::MilliCpu(cpu), core::MemoryMiB(memory)};
}

}  // namespace

std::string_view ImagePullName(ImagePull pull) {
  switch (pull) {
    case ImagePull::kMissing:
      return "missing";
    case ImagePull::kNever:
      return "never";
    case ImagePull::kAlways:
      return "always";
  }
  return "missing";
}

std::optional<ImagePull> ParseImagePull(std::string_view name) {
  for (ImagePull pull : {ImagePull::kMissing, ImagePull::kNever, ImagePull::kAlways}) {
    if (ImagePullName(pull) == name) return pull;
  }
  return std::nullopt;
}

Result<EarlySignal> ParseEarlySignal(const json& body, const std::string& path) {
  JsonFields fields(body, path);
  BERTH_RETURN_IF_ERROR(fields.CheckObject());
  EarlySignal signal;
  BERTH_ASSIGN_OR_RETURN(std::string name, fields.String("name", true));
  BERTH_ASSIGN_OR_RETURN(std::optional<core::Duration> before, ReadSeconds(fields, "before_s"));
  BERTH_ASSIGN_OR_RETURN(signal.batch_only, fields.Bool("batch_only", false));
  BERTH_RETURN_IF_ERROR(fields.Finish());
  std::optional<std::string> canonical = CanonicalSignalName(name);
  if (!canonical) {
    return InvalidArgument(fields.Name("name") + "expected " + kSignalExpected + ", got '" +
                           Printable(name, kMaxEchoChars) + "'");
  }
  signal.name = *canonical;
  if (before) signal.before = *before;
  return signal;
}

void AddTaskLaunchJson(const TaskLaunch& launch, json& entry) {
  entry["name"] = launch.name;
  entry["command"] = launch.command;
  entry["script"] = launch.script;
  entry["env"] = launch.env;
  entry["workdir"] = launch.workdir;
  entry["output"] = launch.output;
  entry["error"] = launch.error;
  entry["open_mode"] = launch.append_output ? "append" : "truncate";
  entry["array_job"] = launch.array_job ? json(*launch.array_job) : json(nullptr);
  entry["array_index"] = launch.array_index ? json(*launch.array_index) : json(nullptr);
  entry["time_limit_s"] = launch.time_limit ? SecondsJson(*launch.time_limit) : json(nullptr);
  entry["grace_s"] = SecondsJson(launch.grace);
  entry["run_as"] = json{{"user", launch.run_as.user}};
  entry["limits"] =
      json{{"cpu_milli", launch.limits.cpu.value()}, {"memory_mib", launch.limits.memory.value()}};
  entry["container"] = launch.container ? ContainerJson(*launch.container) : json(nullptr);
  if (launch.slurm) entry["slurm"] = SlurmJson(*launch.slurm);
  // Only when set: agents from before it refuse fields they do not know.
  if (launch.signal) {
    entry["signal"] = json{{"name", launch.signal->name},
                           {"before_s", SecondsJson(launch.signal->before)},
                           {"batch_only", launch.signal->batch_only}};
  }
}

// A launch with neither command nor script is not refused here: the agent
// fails that task's start (exit 127) instead of the whole answer.
Result<TaskLaunch> ParseTaskLaunch(JsonFields& entry) {
  TaskLaunch launch;
  BERTH_ASSIGN_OR_RETURN(launch.name, entry.String("name", false));
  BERTH_ASSIGN_OR_RETURN(launch.command, entry.Strings("command"));
  BERTH_ASSIGN_OR_RETURN(launch.script, entry.String("script", false));
  BERTH_ASSIGN_OR_RETURN(launch.env, entry.StringMap("env"));
  BERTH_ASSIGN_OR_RETURN(launch.workdir, entry.String("workdir", false));
  BERTH_ASSIGN_OR_RETURN(launch.output, entry.String("output", false));
  BERTH_ASSIGN_OR_RETURN(launch.error, entry.String("error", false));
  BERTH_ASSIGN_OR_RETURN(std::string open_mode, entry.String("open_mode", false));
  if (!open_mode.empty() && open_mode != "append" && open_mode != "truncate") {
    return InvalidArgument(entry.Name("open_mode") + "expected append or truncate, got '" +
                           Printable(open_mode, kMaxEchoChars) + "'");
  }
  launch.append_output = open_mode == "append";
  BERTH_ASSIGN_OR_RETURN(int64_t array_job, entry.Int("array_job", 0, 1, INT64_MAX));
  if (array_job > 0) launch.array_job = array_job;
  BERTH_ASSIGN_OR_RETURN(int64_t array_index, entry.Int("array_index", -1, 0, INT32_MAX));
  if (array_index >= 0) launch.array_index = static_cast<int32_t>(array_index);
  BERTH_ASSIGN_OR_RETURN(launch.time_limit, ReadSeconds(entry, "time_limit_s"));
  BERTH_ASSIGN_OR_RETURN(std::optional<core::Duration> grace, ReadSeconds(entry, "grace_s"));
  if (grace) launch.grace = *grace;
  if (const json* run_as = entry.Get("run_as")) {
    BERTH_ASSIGN_OR_RETURN(launch.run_as, ParseRunAs(*run_as, entry.Path("run_as")));
  }
  if (const json* limits = entry.Get("limits")) {
    BERTH_ASSIGN_OR_RETURN(launch.limits, ParseLimits(*limits, entry.Path("limits")));
  }
  if (const json* container = entry.Get("container")) {
    BERTH_ASSIGN_OR_RETURN(launch.container, ParseContainer(*container, entry.Path("container")));
  }
  if (const json* slurm = entry.Get("slurm")) {
    BERTH_ASSIGN_OR_RETURN(launch.slurm, ParseSlurm(*slurm, entry.Path("slurm")));
  }
  if (const json* signal = entry.Get("signal")) {
    BERTH_ASSIGN_OR_RETURN(launch.signal, ParseEarlySignal(*signal, entry.Path("signal")));
  }
  return launch;
}

}  // namespace berth::protocol
