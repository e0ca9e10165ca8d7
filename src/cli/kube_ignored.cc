#include "cli/kube_ignored.h"

#include <array>
#include <utility>

namespace berth::cli {

std::string WhyKubeFieldIgnored(std::string_view field) {
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

void WarnIgnored(KubeJob& job, const std::string& path, std::string_view why) {
  job.warnings.push_back(path + ": ignored, " + std::string(why));
}

void WarnUnread(const YamlFields& fields, KubeJob& job) {
  for (const std::string& key : fields.Rest()) {
    WarnIgnored(job, fields.PathOf(key), WhyKubeFieldIgnored(key));
  }
}

}  // namespace berth::cli
