#include "cli/kube_container.h"

#include <utility>

#include "cli/kube_ignored.h"
#include "cli/kube_quantity.h"

namespace berth::cli {
namespace {

using nlohmann::json;

constexpr std::string_view kGpuResource = "nvidia.com/gpu";

// The volume's host path, or an error: a mount Berth cannot give would
// leave the program without its data.
Result<std::string> MountSource(const std::string& name, const std::string& mount_path,
                                KubeVolumes& volumes) {
  const auto volume = volumes.find(name);
  if (volume == volumes.end()) {
    return InvalidArgument(mount_path + ".name: no volume in spec.volumes is named '" + name + "'");
  }
  volume->second.mounted = true;
  if (!volume->second.host_path) {
    return InvalidArgument(volume->second.path + "." +
                           (volume->second.kind.empty() ? "hostPath" : volume->second.kind) +
                           ": only hostPath volumes can be mounted in Berth (volume '" + name +
                           "' at " + mount_path + ")");
  }
  return *volume->second.host_path;
}

Result<json> ReadMounts(YamlFields& container, KubeVolumes& volumes, KubeJob& job) {
  json mounts = json::array();
  const YAML::Node list = container.Take("volumeMounts");
  if (list.IsNull()) return mounts;
  if (!list.IsSequence()) {
    return InvalidArgument(container.PathOf("volumeMounts") + ": expected a list");
  }
  for (size_t i = 0; i < list.size(); ++i) {
    BERTH_ASSIGN_OR_RETURN(
        YamlFields mount,
        YamlFields::Open(list[i], YamlElementPath(container.PathOf("volumeMounts"), i)));
    BERTH_ASSIGN_OR_RETURN(std::optional<std::string> name, mount.String("name"));
    BERTH_ASSIGN_OR_RETURN(std::optional<std::string> target, mount.String("mountPath"));
    BERTH_ASSIGN_OR_RETURN(std::optional<bool> read_only, mount.Bool("readOnly"));
    BERTH_ASSIGN_OR_RETURN(std::optional<std::string> sub_path, mount.String("subPath"));
    if (!name) return InvalidArgument(mount.PathOf("name") + ": is required");
    if (!target || !target->starts_with("/")) {
      return InvalidArgument(mount.PathOf("mountPath") + ": expected an absolute path");
    }
    BERTH_ASSIGN_OR_RETURN(std::string source, MountSource(*name, mount.path(), volumes));
    if (sub_path && !sub_path->empty()) {
      if (sub_path->starts_with("/") || sub_path->find("..") != std::string::npos) {
        return InvalidArgument(mount.PathOf("subPath") + ": expected a relative path without '..'");
      }
      source += (source.ends_with("/") ? "" : "/") + *sub_path;
    }
    WarnUnread(mount, job);
    mounts.push_back(
        {{"source", source}, {"target", *target}, {"read_only", read_only.value_or(false)}});
  }
  return mounts;
}

Result<json> ReadEnv(YamlFields& container, KubeJob& job) {
  json env = json::object();
  if (const YAML::Node from = container.Take("envFrom"); !from.IsNull()) {
    return InvalidArgument(container.PathOf("envFrom") +
                           ": not supported, Berth has no ConfigMaps or Secrets; list the "
                           "variables under env with their values");
  }
  const YAML::Node list = container.Take("env");
  if (list.IsNull()) return env;
  if (!list.IsSequence()) return InvalidArgument(container.PathOf("env") + ": expected a list");
  for (size_t i = 0; i < list.size(); ++i) {
    BERTH_ASSIGN_OR_RETURN(YamlFields variable,
                           YamlFields::Open(list[i], YamlElementPath(container.PathOf("env"), i)));
    BERTH_ASSIGN_OR_RETURN(std::optional<std::string> name, variable.String("name"));
    BERTH_ASSIGN_OR_RETURN(std::optional<std::string> value, variable.String("value"));
    if (!name || name->empty() || name->find('=') != std::string::npos) {
      return InvalidArgument(variable.PathOf("name") + ": expected a variable name without '='");
    }
    if (!variable.Take("valueFrom").IsNull()) {
      return InvalidArgument(variable.PathOf("valueFrom") +
                             ": not supported, Berth has no ConfigMaps, Secrets or downward API; "
                             "give the variable a value");
    }
    WarnUnread(variable, job);
    env[*name] = value.value_or("");  // a later entry wins, as in Kubernetes
  }
  return env;
}

// One resource's quantity: the limit, else the request (Kubernetes'
// defaulting), and the paths of both for messages.
struct Asked {
  std::optional<std::string> limit;
  std::optional<std::string> request;
  std::string limit_path;
  std::string request_path;
};

// For cpu and memory: Berth reserves and enforces one amount, the limit
// (so the program is never held below what Kubernetes would allow it).
Result<int64_t> LimitOverRequest(const Asked& asked,
                                 Result<int64_t> (*parse)(std::string_view, std::string_view),
                                 KubeJob& job) {
  std::optional<int64_t> limit;
  std::optional<int64_t> request;
  if (asked.limit) {
    BERTH_ASSIGN_OR_RETURN(limit, parse(*asked.limit, asked.limit_path));
  }
  if (asked.request) {
    BERTH_ASSIGN_OR_RETURN(request, parse(*asked.request, asked.request_path));
  }
  if (limit && request && *request > *limit) {
    return InvalidArgument(asked.request_path + ": must not exceed " + asked.limit_path + " (" +
                           *asked.limit + "), got '" + *asked.request + "'");
  }
  if (limit && request && *request < *limit) {
    WarnIgnored(job, asked.request_path,
                "Berth reserves and enforces one amount, the limit " + *asked.limit);
  }
  return limit ? *limit : *request;
}

Result<int64_t> Gpus(const Asked& asked) {
  std::optional<int64_t> limit;
  std::optional<int64_t> request;
  if (asked.limit) {
    BERTH_ASSIGN_OR_RETURN(limit, KubeWholeCount(*asked.limit, asked.limit_path));
  }
  if (asked.request) {
    BERTH_ASSIGN_OR_RETURN(request, KubeWholeCount(*asked.request, asked.request_path));
  }
  if (limit && request && *limit != *request) {
    return InvalidArgument(asked.request_path + ": must equal " + asked.limit_path + " (" +
                           *asked.limit + "), got '" + *asked.request + "'");
  }
  return limit ? *limit : *request;
}

Status ReadResources(YamlFields& container, KubeJob& job) {
  BERTH_ASSIGN_OR_RETURN(YamlFields resources, YamlFields::Open(container.Take("resources"),
                                                                container.PathOf("resources")));
  // Resource names in the order first written, limits before requests.
  std::vector<std::string> names;
  std::map<std::string, Asked> asked;
  for (const std::string_view kind : {"limits", "requests"}) {
    BERTH_ASSIGN_OR_RETURN(YamlFields amounts,
                           YamlFields::Open(resources.Take(kind), resources.PathOf(kind)));
    for (const std::string& name : amounts.Rest()) {
      BERTH_ASSIGN_OR_RETURN(std::optional<std::string> amount, amounts.String(name));
      if (!amount) continue;
      if (!asked.contains(name)) names.push_back(name);
      Asked& entry = asked[name];
      (kind == "limits" ? entry.limit : entry.request) = *amount;
      (kind == "limits" ? entry.limit_path : entry.request_path) = amounts.PathOf(name);
    }
  }
  WarnUnread(resources, job);
  SubmitOptions& options = job.options;
  options.gpus = 0;  // a Pod that asks for no GPU gets none (Berth's default is 1)
  for (const std::string& name : names) {
    const Asked& entry = asked[name];
    if (name == kGpuResource) {
      BERTH_ASSIGN_OR_RETURN(options.gpus, Gpus(entry));
    } else if (name == "cpu") {
      BERTH_ASSIGN_OR_RETURN(int64_t millicores, LimitOverRequest(entry, KubeMilliCpu, job));
      options.cpus = static_cast<double>(millicores) / 1000.0;
    } else if (name == "memory") {
      BERTH_ASSIGN_OR_RETURN(int64_t mib, LimitOverRequest(entry, KubeMemoryMiB, job));
      options.mem = std::to_string(mib);
    } else {
      for (const std::string* path : {&entry.limit_path, &entry.request_path}) {
        if (!path->empty())
          WarnIgnored(job, *path, "Berth accounts for GPUs, CPUs and memory only");
      }
    }
  }
  return Status::Ok();
}

// Kubernetes runs command + args; podman and docker run the entrypoint
// followed by the job's command, so the first word of command is the
// entrypoint and the rest, then args, the command: the same argv, and a job
// with a command whenever Kubernetes would pass the program an argument.
Status ReadCommand(YamlFields& container, KubeJob& job) {
  BERTH_ASSIGN_OR_RETURN(std::vector<std::string> command, container.Strings("command"));
  BERTH_ASSIGN_OR_RETURN(std::vector<std::string> args, container.Strings("args"));
  for (const auto& [key, words] : {std::pair{"command", &command}, std::pair{"args", &args}}) {
    for (size_t i = 0; i < words->size(); ++i) {
      if ((*words)[i].find("$(") != std::string::npos) {
        job.warnings.push_back(YamlElementPath(container.PathOf(key), i) +
                               ": passed as written; Berth does not expand $(VAR)");
      }
    }
  }
  if (!command.empty()) {
    if (command[0].empty()) {
      return InvalidArgument(YamlElementPath(container.PathOf("command"), 0) +
                             ": expected a program, got ''");
    }
    job.container["entrypoint"] = json::array({command[0]});
    command.erase(command.begin());
  }
  command.insert(command.end(), args.begin(), args.end());
  job.command = std::move(command);
  return Status::Ok();
}

Result<std::string> PullPolicy(std::string_view policy, const std::string& path) {
  if (policy == "IfNotPresent") return std::string("missing");
  if (policy == "Never") return std::string("never");
  if (policy == "Always") return std::string("always");
  return InvalidArgument(path + ": expected IfNotPresent, Never or Always, got '" +
                         std::string(policy) + "'");
}

}  // namespace

Result<KubeVolumes> ReadKubeVolumes(YamlFields& pod, KubeJob& job) {
  KubeVolumes volumes;
  const YAML::Node list = pod.Take("volumes");
  if (list.IsNull()) return volumes;
  if (!list.IsSequence()) return InvalidArgument(pod.PathOf("volumes") + ": expected a list");
  for (size_t i = 0; i < list.size(); ++i) {
    BERTH_ASSIGN_OR_RETURN(YamlFields fields,
                           YamlFields::Open(list[i], YamlElementPath(pod.PathOf("volumes"), i)));
    BERTH_ASSIGN_OR_RETURN(std::optional<std::string> name, fields.String("name"));
    if (!name) return InvalidArgument(fields.PathOf("name") + ": is required");
    KubeVolume volume{fields.path(), std::nullopt, "", false};
    if (const YAML::Node host_path = fields.Take("hostPath"); !host_path.IsNull()) {
      BERTH_ASSIGN_OR_RETURN(YamlFields host,
                             YamlFields::Open(host_path, fields.PathOf("hostPath")));
      BERTH_ASSIGN_OR_RETURN(volume.host_path, host.String("path"));
      if (!volume.host_path || !volume.host_path->starts_with("/")) {
        return InvalidArgument(host.PathOf("path") + ": expected an absolute host path");
      }
      BERTH_ASSIGN_OR_RETURN(std::optional<std::string> type, host.String("type"));
      if (type && !type->empty()) {
        WarnIgnored(job, host.PathOf("type"), "Berth does not check what the host path is");
      }
      WarnUnread(host, job);
    }
    // A source of another kind, even an empty one ("emptyDir: {}").
    const std::vector<std::string> rest = fields.Untaken();
    if (!rest.empty()) volume.kind = rest[0];
    if (!volumes.emplace(*name, std::move(volume)).second) {
      return InvalidArgument(fields.PathOf("name") + ": '" + *name + "' names two volumes");
    }
  }
  return volumes;
}

Status ReadKubeContainer(const YAML::Node& node, const std::string& path, KubeVolumes& volumes,
                         KubeJob& job) {
  BERTH_ASSIGN_OR_RETURN(YamlFields container, YamlFields::Open(node, path));
  json& out = job.container;
  BERTH_ASSIGN_OR_RETURN(std::optional<std::string> name, container.String("name"));
  if (name && !job.options.name) job.options.name = *name;
  BERTH_ASSIGN_OR_RETURN(std::optional<std::string> image, container.String("image"));
  if (!image || image->empty()) return InvalidArgument(container.PathOf("image") + ": is required");
  out["image"] = *image;
  BERTH_ASSIGN_OR_RETURN(std::optional<std::string> pull, container.String("imagePullPolicy"));
  if (pull) {
    BERTH_ASSIGN_OR_RETURN(out["pull"], PullPolicy(*pull, container.PathOf("imagePullPolicy")));
  }
  BERTH_RETURN_IF_ERROR(ReadCommand(container, job));
  BERTH_ASSIGN_OR_RETURN(json env, ReadEnv(container, job));
  if (!env.empty()) out["env"] = std::move(env);
  BERTH_ASSIGN_OR_RETURN(std::optional<std::string> workdir, container.String("workingDir"));
  if (workdir) {
    if (!workdir->starts_with("/")) {
      return InvalidArgument(container.PathOf("workingDir") + ": expected an absolute path, got '" +
                             *workdir + "'");
    }
    out["workdir"] = *workdir;
  }
  BERTH_ASSIGN_OR_RETURN(json mounts, ReadMounts(container, volumes, job));
  if (!mounts.empty()) out["mounts"] = std::move(mounts);
  out["mount_home"] = false;  // a Pod sees only what it mounts
  BERTH_RETURN_IF_ERROR(ReadResources(container, job));
  WarnUnread(container, job);
  return Status::Ok();
}

}  // namespace berth::cli
