#include "cli/kube_manifest.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <utility>

#include "cli/kube_quantity.h"
#include "cli/yaml_fields.h"
#include "core/constraint.h"

namespace berth::cli {
namespace {

using nlohmann::json;

constexpr std::string_view kGpuResource = "nvidia.com/gpu";
constexpr std::string_view kHostnameLabel = "kubernetes.io/hostname";

// Why a field that Berth reads nothing from is ignored, by its name (the
// same name means the same thing wherever it appears in a Pod or a Job).
std::string WhyIgnored(std::string_view field) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 24> kWhy = {{
      {"livenessProbe", "Berth has no probes"},
      {"readinessProbe", "Berth has no probes"},
      {"startupProbe", "Berth has no probes"},
      {"namespace", "Berth has no namespaces"},
      {"labels", "Berth jobs carry no labels"},
      {"annotations", "Berth jobs carry no annotations"},
      {"generateName", "Berth numbers its jobs itself; metadata.name names one"},
      {"ports", "a Berth container uses the host's network, with nothing to publish"},
      {"hostNetwork", "a Berth container always uses the host's network"},
      {"dnsPolicy", "a Berth container uses the host's network and DNS"},
      {"securityContext", "a Berth container runs as the job's user"},
      {"tolerations", "Berth nodes have no taints"},
      {"affinity", "Berth reads spec.nodeSelector only"},
      {"serviceAccountName", "Berth has no service accounts"},
      {"imagePullSecrets", "the node's podman or docker login is used"},
      {"lifecycle", "Berth has no lifecycle hooks"},
      {"priorityClassName", "use berth submit --priority"},
      {"schedulerName", "Berth is the scheduler"},
      {"initContainers", "Berth runs one container; run their steps in its command"},
      {"status", "Kubernetes writes it; it is no part of a request"},
      {"ttlSecondsAfterFinished", "Berth keeps a finished job's record"},
      {"stdin", "a Berth job has no terminal"},
      {"tty", "a Berth job has no terminal"},
      {"completionMode", "each task's index is in RANK and BERTH_TASK, not JOB_COMPLETION_INDEX"},
  }};
  for (const auto& [name, why] : kWhy) {
    if (name == field) return std::string(why);
  }
  return "it has no meaning in Berth";
}

void Warn(KubeJob& job, const std::string& path, std::string_view why) {
  job.warnings.push_back(path + ": ignored, " + std::string(why));
}

// Warns about every field of `fields` that nothing read.
void WarnRest(const YamlFields& fields, KubeJob& job) {
  for (const std::string& key : fields.Rest()) Warn(job, fields.PathOf(key), WhyIgnored(key));
}

// What the reading gathers before it becomes options: the deadline may come
// from the Job and from its Pod.
struct Reading {
  KubeJob job;
  std::optional<int64_t> deadline_s;

  void Deadline(std::optional<int64_t> seconds) {
    if (seconds) deadline_s = deadline_s ? std::min(*deadline_s, *seconds) : *seconds;
  }
};

// A volume of spec.volumes by name: its host path, or the kind of volume it
// is when that is not a hostPath.
struct Volume {
  std::string path;  // e.g. "spec.volumes[1]"
  std::optional<std::string> host_path;
  std::string kind;
  bool mounted = false;
};
using Volumes = std::map<std::string, Volume>;

Result<Volumes> ReadVolumes(YamlFields& pod, Reading& reading) {
  Volumes volumes;
  const YAML::Node list = pod.Take("volumes");
  if (list.IsNull()) return volumes;
  if (!list.IsSequence()) return InvalidArgument(pod.PathOf("volumes") + ": expected a list");
  for (size_t i = 0; i < list.size(); ++i) {
    BERTH_ASSIGN_OR_RETURN(YamlFields fields,
                           YamlFields::Open(list[i], YamlElementPath(pod.PathOf("volumes"), i)));
    BERTH_ASSIGN_OR_RETURN(std::optional<std::string> name, fields.String("name"));
    if (!name) return InvalidArgument(fields.PathOf("name") + ": is required");
    Volume volume{fields.path(), std::nullopt, "", false};
    if (const YAML::Node host_path = fields.Take("hostPath"); !host_path.IsNull()) {
      BERTH_ASSIGN_OR_RETURN(YamlFields host,
                             YamlFields::Open(host_path, fields.PathOf("hostPath")));
      BERTH_ASSIGN_OR_RETURN(volume.host_path, host.String("path"));
      if (!volume.host_path || !volume.host_path->starts_with("/")) {
        return InvalidArgument(host.PathOf("path") + ": expected an absolute host path");
      }
      BERTH_ASSIGN_OR_RETURN(std::optional<std::string> type, host.String("type"));
      if (type && !type->empty()) {
        Warn(reading.job, host.PathOf("type"), "Berth does not check what the host path is");
      }
      WarnRest(host, reading.job);
    }
    const std::vector<std::string> rest = fields.Rest();
    if (!rest.empty()) volume.kind = rest[0];
    if (!volumes.emplace(*name, std::move(volume)).second) {
      return InvalidArgument(fields.PathOf("name") + ": '" + *name + "' names two volumes");
    }
  }
  return volumes;
}

// The volume's host path, or an error: a mount Berth cannot give would
// leave the program without its data.
Result<std::string> MountSource(const std::string& name, const std::string& mount_path,
                                Volumes& volumes) {
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

Result<json> ReadMounts(YamlFields& container, Volumes& volumes, Reading& reading) {
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
    WarnRest(mount, reading.job);
    mounts.push_back(
        {{"source", source}, {"target", *target}, {"read_only", read_only.value_or(false)}});
  }
  return mounts;
}

Result<json> ReadEnv(YamlFields& container, Reading& reading) {
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
    WarnRest(variable, reading.job);
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
                                 Reading& reading) {
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
    Warn(reading.job, asked.request_path,
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

Status ReadResources(YamlFields& container, Reading& reading) {
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
  WarnRest(resources, reading.job);
  SubmitOptions& options = reading.job.options;
  options.gpus = 0;  // a Pod that asks for no GPU gets none (Berth's default is 1)
  for (const std::string& name : names) {
    const Asked& entry = asked[name];
    if (name == kGpuResource) {
      BERTH_ASSIGN_OR_RETURN(options.gpus, Gpus(entry));
    } else if (name == "cpu") {
      BERTH_ASSIGN_OR_RETURN(int64_t millicores, LimitOverRequest(entry, KubeMilliCpu, reading));
      options.cpus = static_cast<double>(millicores) / 1000.0;
    } else if (name == "memory") {
      BERTH_ASSIGN_OR_RETURN(int64_t mib, LimitOverRequest(entry, KubeMemoryMiB, reading));
      options.mem = std::to_string(mib);
    } else {
      for (const std::string* path : {&entry.limit_path, &entry.request_path}) {
        if (!path->empty())
          Warn(reading.job, *path, "Berth accounts for GPUs, CPUs and memory only");
      }
    }
  }
  return Status::Ok();
}

// Kubernetes runs command + args; a container runs its entrypoint followed
// by the job's command: the first word of command is the entrypoint.
Status ReadCommand(YamlFields& container, Reading& reading) {
  BERTH_ASSIGN_OR_RETURN(std::vector<std::string> command, container.Strings("command"));
  BERTH_ASSIGN_OR_RETURN(std::vector<std::string> args, container.Strings("args"));
  for (const auto& [key, words] : {std::pair{"command", &command}, std::pair{"args", &args}}) {
    for (size_t i = 0; i < words->size(); ++i) {
      if ((*words)[i].find("$(") != std::string::npos) {
        reading.job.warnings.push_back(YamlElementPath(container.PathOf(key), i) +
                                       ": passed as written; Berth does not expand $(VAR)");
      }
    }
  }
  if (!command.empty()) {
    if (command[0].empty()) {
      return InvalidArgument(YamlElementPath(container.PathOf("command"), 0) +
                             ": expected a program, got ''");
    }
    reading.job.container["entrypoint"] = json::array({command[0]});
    command.erase(command.begin());
  }
  command.insert(command.end(), args.begin(), args.end());
  reading.job.command = std::move(command);
  return Status::Ok();
}

Result<std::string> PullPolicy(std::string_view policy, const std::string& path) {
  if (policy == "IfNotPresent") return std::string("missing");
  if (policy == "Never") return std::string("never");
  if (policy == "Always") return std::string("always");
  return InvalidArgument(path + ": expected IfNotPresent, Never or Always, got '" +
                         std::string(policy) + "'");
}

Status ReadContainer(const YAML::Node& node, const std::string& path, Volumes& volumes,
                     Reading& reading) {
  BERTH_ASSIGN_OR_RETURN(YamlFields container, YamlFields::Open(node, path));
  json& out = reading.job.container;
  BERTH_ASSIGN_OR_RETURN(std::optional<std::string> name, container.String("name"));
  if (name && !reading.job.options.name) reading.job.options.name = *name;
  BERTH_ASSIGN_OR_RETURN(std::optional<std::string> image, container.String("image"));
  if (!image || image->empty()) return InvalidArgument(container.PathOf("image") + ": is required");
  out["image"] = *image;
  BERTH_ASSIGN_OR_RETURN(std::optional<std::string> pull, container.String("imagePullPolicy"));
  if (pull) {
    BERTH_ASSIGN_OR_RETURN(out["pull"], PullPolicy(*pull, container.PathOf("imagePullPolicy")));
  }
  BERTH_RETURN_IF_ERROR(ReadCommand(container, reading));
  BERTH_ASSIGN_OR_RETURN(json env, ReadEnv(container, reading));
  if (!env.empty()) out["env"] = std::move(env);
  BERTH_ASSIGN_OR_RETURN(std::optional<std::string> workdir, container.String("workingDir"));
  if (workdir) {
    if (!workdir->starts_with("/")) {
      return InvalidArgument(container.PathOf("workingDir") + ": expected an absolute path, got '" +
                             *workdir + "'");
    }
    out["workdir"] = *workdir;
  }
  BERTH_ASSIGN_OR_RETURN(json mounts, ReadMounts(container, volumes, reading));
  if (!mounts.empty()) out["mounts"] = std::move(mounts);
  out["mount_home"] = false;  // a Pod sees only what it mounts
  BERTH_RETURN_IF_ERROR(ReadResources(container, reading));
  WarnRest(container, reading.job);
  return Status::Ok();
}

// nodeSelector: every label must match, so "k1=v1&k2=v2"; Berth's node
// name stands for the hostname label.
Status ReadNodeSelector(YamlFields& pod, Reading& reading) {
  BERTH_ASSIGN_OR_RETURN(YamlFields selector,
                         YamlFields::Open(pod.Take("nodeSelector"), pod.PathOf("nodeSelector")));
  std::string constraint;
  for (const std::string& key : selector.Rest()) {
    BERTH_ASSIGN_OR_RETURN(std::optional<std::string> value, selector.String(key));
    const std::string label = key + "=" + value.value_or("");
    if (key == kHostnameLabel && value && !value->empty()) {
      reading.job.options.nodelist = *value;
      continue;
    }
    if (!core::IsFeatureName(label)) {
      return InvalidArgument(selector.PathOf(key) + ": '" + label +
                             "' cannot be a Berth node label (1..64 of A-Z a-z 0-9 _ - . : / + =)");
    }
    constraint += (constraint.empty() ? "" : "&") + label;
  }
  if (!constraint.empty()) reading.job.options.constraint = constraint;
  return Status::Ok();
}

enum class Owner { kPod, kJob };

Status ReadRestartPolicy(YamlFields& pod, Owner owner, Reading& reading) {
  BERTH_ASSIGN_OR_RETURN(std::optional<std::string> policy, pod.String("restartPolicy"));
  if (!policy) return Status::Ok();
  const std::string path = pod.PathOf("restartPolicy");
  if (*policy != "Never" && *policy != "OnFailure" && *policy != "Always") {
    return InvalidArgument(path + ": expected Never, OnFailure or Always, got '" + *policy + "'");
  }
  if (owner == Owner::kJob && *policy == "Always") {
    return InvalidArgument(path + ": a Job's Pod restarts Never or OnFailure, got 'Always'");
  }
  if (owner == Owner::kPod && *policy != "Never") {
    Warn(reading.job, path,
         "a Berth job runs until it ends and is not restarted; a Job's backoffLimit sets retries");
  }
  return Status::Ok();
}

Status ReadPodSpec(const YAML::Node& node, const std::string& path, Owner owner, Reading& reading) {
  BERTH_ASSIGN_OR_RETURN(YamlFields pod, YamlFields::Open(node, path));
  BERTH_ASSIGN_OR_RETURN(Volumes volumes, ReadVolumes(pod, reading));
  const YAML::Node containers = pod.Take("containers");
  const std::string containers_path = pod.PathOf("containers");
  if (!containers.IsSequence() || containers.size() == 0) {
    return InvalidArgument(containers_path + ": is required, a list of one container");
  }
  if (containers.size() > 1) {
    return InvalidArgument(containers_path + ": Berth runs exactly one container, got " +
                           std::to_string(containers.size()));
  }
  BERTH_RETURN_IF_ERROR(
      ReadContainer(containers[0], YamlElementPath(containers_path, 0), volumes, reading));
  for (const auto& [name, volume] : volumes) {
    if (!volume.mounted) Warn(reading.job, volume.path, "no container mounts it");
  }
  BERTH_RETURN_IF_ERROR(ReadNodeSelector(pod, reading));
  BERTH_RETURN_IF_ERROR(ReadRestartPolicy(pod, owner, reading));
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> deadline, pod.Integer("activeDeadlineSeconds", 1));
  reading.Deadline(deadline);
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> grace,
                         pod.Integer("terminationGracePeriodSeconds", 0));
  if (grace) reading.job.options.grace = std::to_string(*grace);
  BERTH_ASSIGN_OR_RETURN(std::optional<bool> host_network, pod.Bool("hostNetwork"));
  if (host_network == false)
    Warn(reading.job, pod.PathOf("hostNetwork"), WhyIgnored("hostNetwork"));
  WarnRest(pod, reading.job);
  return Status::Ok();
}

Status ReadJobSpec(const YAML::Node& node, Reading& reading) {
  BERTH_ASSIGN_OR_RETURN(YamlFields spec, YamlFields::Open(node, "spec"));
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> parallelism, spec.Integer("parallelism", 1));
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> completions, spec.Integer("completions", 1));
  // One Berth job is one gang: its tasks start together and it succeeds
  // when every one does, which is completions == parallelism.
  if (completions && *completions != parallelism.value_or(1)) {
    return InvalidArgument(
        "spec.completions: Berth runs parallelism tasks as one gang, so "
        "completions must equal parallelism (" +
        std::to_string(parallelism.value_or(1)) + "), got " + std::to_string(*completions));
  }
  if (parallelism) reading.job.options.tasks = *parallelism;
  BERTH_ASSIGN_OR_RETURN(reading.job.options.retries, spec.Integer("backoffLimit", 0));
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> deadline, spec.Integer("activeDeadlineSeconds", 1));
  reading.Deadline(deadline);
  BERTH_ASSIGN_OR_RETURN(std::optional<bool> suspend, spec.Bool("suspend"));
  if (suspend == true) reading.job.options.hold = true;
  BERTH_ASSIGN_OR_RETURN(std::optional<std::string> mode, spec.String("completionMode"));
  if (mode == "Indexed")
    Warn(reading.job, spec.PathOf("completionMode"), WhyIgnored("completionMode"));
  BERTH_ASSIGN_OR_RETURN(YamlFields pod_template,
                         YamlFields::Open(spec.Take("template"), spec.PathOf("template")));
  BERTH_ASSIGN_OR_RETURN(
      YamlFields pod_metadata,
      YamlFields::Open(pod_template.Take("metadata"), pod_template.PathOf("metadata")));
  WarnRest(pod_metadata, reading.job);
  BERTH_RETURN_IF_ERROR(
      ReadPodSpec(pod_template.Take("spec"), pod_template.PathOf("spec"), Owner::kJob, reading));
  WarnRest(pod_template, reading.job);
  WarnRest(spec, reading.job);
  return Status::Ok();
}

Result<KubeJob> ReadDocument(const YAML::Node& document) {
  BERTH_ASSIGN_OR_RETURN(YamlFields root, YamlFields::Open(document, ""));
  BERTH_ASSIGN_OR_RETURN(std::optional<std::string> api_version, root.String("apiVersion"));
  BERTH_ASSIGN_OR_RETURN(std::optional<std::string> kind, root.String("kind"));
  if (kind != "Pod" && kind != "Job") {
    return InvalidArgument("kind: expected Pod (v1) or Job (batch/v1), got '" + kind.value_or("") +
                           "'");
  }
  const std::string_view version = *kind == "Pod" ? "v1" : "batch/v1";
  if (api_version != version) {
    return InvalidArgument("apiVersion: a " + *kind + " is " + std::string(version) + ", got '" +
                           api_version.value_or("") + "'");
  }
  Reading reading;
  BERTH_ASSIGN_OR_RETURN(YamlFields metadata, YamlFields::Open(root.Take("metadata"), "metadata"));
  BERTH_ASSIGN_OR_RETURN(reading.job.options.name, metadata.String("name"));
  WarnRest(metadata, reading.job);
  const YAML::Node spec = root.Take("spec");
  if (spec.IsNull()) return InvalidArgument("spec: is required");
  if (*kind == "Pod") {
    BERTH_RETURN_IF_ERROR(ReadPodSpec(spec, "spec", Owner::kPod, reading));
  } else {
    BERTH_RETURN_IF_ERROR(ReadJobSpec(spec, reading));
  }
  WarnRest(root, reading.job);
  if (reading.deadline_s) reading.job.options.time = std::to_string(*reading.deadline_s) + "s";
  return std::move(reading.job);
}

Status YamlError(const YAML::Exception& error) {
  return InvalidArgument("manifest: line " + std::to_string(error.mark.line + 1) + ", column " +
                         std::to_string(error.mark.column + 1) + ": " + error.msg);
}

}  // namespace

Result<KubeJob> ParseKubeManifest(std::string_view yaml) {
  try {
    std::vector<YAML::Node> documents = YAML::LoadAll(std::string(yaml));
    std::erase_if(documents, [](const YAML::Node& document) { return document.IsNull(); });
    if (documents.empty()) return InvalidArgument("manifest: empty, expected a Pod or a Job");
    if (documents.size() > 1) {
      return InvalidArgument("manifest: " + std::to_string(documents.size()) +
                             " YAML documents; give one Pod or Job per file");
    }
    return ReadDocument(documents[0]);
  } catch (const YAML::Exception& error) {
    return YamlError(error);
  }
}

Result<json> KubeSubmissionBody(const KubeJob& job, const SubmitOptions& command_line) {
  SubmitOptions options = command_line;
  options.FillFrom(job.options);
  BERTH_ASSIGN_OR_RETURN(json body, SubmissionBody(options, job.command, ""));
  if (job.command.empty()) body.erase("script");  // the image's own command
  body["container"] = job.container;
  return body;
}

}  // namespace berth::cli
