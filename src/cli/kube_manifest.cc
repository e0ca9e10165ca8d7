#include "cli/kube_manifest.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "cli/kube_container.h"
#include "cli/kube_ignored.h"
#include "cli/yaml_fields.h"
#include "core/constraint.h"

namespace berth::cli {
namespace {

using nlohmann::json;

constexpr std::string_view kHostnameLabel = "kubernetes.io/hostname";

// What the reading gathers before it becomes options: the deadline may come
// from the Job and from its Pod.
struct Reading {
  KubeJob job;
  std::optional<int64_t> deadline_s;

  void Deadline(std::optional<int64_t> seconds) {
    if (seconds) deadline_s = deadline_s ? std::min(*deadline_s, *seconds) : *seconds;
  }
};

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
    WarnIgnored(
        reading.job, path,
        "a Berth job runs until it ends and is not restarted; a Job's backoffLimit sets retries");
  }
  return Status::Ok();
}

Status ReadPodSpec(const YAML::Node& node, const std::string& path, Owner owner, Reading& reading) {
  BERTH_ASSIGN_OR_RETURN(YamlFields pod, YamlFields::Open(node, path));
  BERTH_ASSIGN_OR_RETURN(KubeVolumes volumes, ReadKubeVolumes(pod, reading.job));
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
      ReadKubeContainer(containers[0], YamlElementPath(containers_path, 0), volumes, reading.job));
  for (const auto& [name, volume] : volumes) {
    if (!volume.mounted) WarnIgnored(reading.job, volume.path, "no container mounts it");
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
    WarnIgnored(reading.job, pod.PathOf("hostNetwork"), WhyKubeFieldIgnored("hostNetwork"));
  WarnUnread(pod, reading.job);
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
    WarnIgnored(reading.job, spec.PathOf("completionMode"), WhyKubeFieldIgnored("completionMode"));
  BERTH_ASSIGN_OR_RETURN(YamlFields pod_template,
                         YamlFields::Open(spec.Take("template"), spec.PathOf("template")));
  BERTH_ASSIGN_OR_RETURN(
      YamlFields pod_metadata,
      YamlFields::Open(pod_template.Take("metadata"), pod_template.PathOf("metadata")));
  WarnUnread(pod_metadata, reading.job);
  BERTH_RETURN_IF_ERROR(
      ReadPodSpec(pod_template.Take("spec"), pod_template.PathOf("spec"), Owner::kJob, reading));
  WarnUnread(pod_template, reading.job);
  WarnUnread(spec, reading.job);
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
  WarnUnread(metadata, reading.job);
  const YAML::Node spec = root.Take("spec");
  if (spec.IsNull()) return InvalidArgument("spec: is required");
  if (*kind == "Pod") {
    BERTH_RETURN_IF_ERROR(ReadPodSpec(spec, "spec", Owner::kPod, reading));
  } else {
    BERTH_RETURN_IF_ERROR(ReadJobSpec(spec, reading));
  }
  WarnUnread(root, reading.job);
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
