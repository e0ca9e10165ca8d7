// The one container of a Kubernetes Pod read into a Berth job: its image,
// command, env, mounts and resources (the table in cli/kube_manifest.h).
// Pure; the Pod-level fields are read in kube_manifest.cc.
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <optional>
#include <string>

#include "cli/kube_manifest.h"
#include "cli/yaml_fields.h"
#include "common/status.h"

namespace berth::cli {

// A volume of spec.volumes: its host path, or the kind of volume it is when
// it is not a hostPath (only hostPath volumes can be mounted).
struct KubeVolume {
  std::string path;  // e.g. "spec.volumes[1]"
  std::optional<std::string> host_path;
  std::string kind;
  bool mounted = false;  // set by ReadKubeContainer: unmounted ones are warned about
};
using KubeVolumes = std::map<std::string, KubeVolume>;  // by name

// The Pod's spec.volumes, taken from `pod`.
Result<KubeVolumes> ReadKubeVolumes(YamlFields& pod, KubeJob& job);

// The container at `path` into job.container, job.command and job.options
// (gpus, cpus, memory; a name if the job has none), its unread fields warned.
Status ReadKubeContainer(const YAML::Node& node, const std::string& path, KubeVolumes& volumes,
                         KubeJob& job);

}  // namespace berth::cli
