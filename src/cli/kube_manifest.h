// A Kubernetes Pod (v1) or Job (batch/v1) manifest read as a Berth job:
// `berth submit -f FILE.yaml`. Pure: YAML text in, the submission's options,
// command and container (plus warnings) out; the command in
// submit_command.cc reads the file and sends the request.
//
// What maps (paths as in a Pod; a Job's are under spec.template.spec):
//   metadata.name                     -> name (else the container's name)
//   spec.containers[0].image          -> container.image
//   .imagePullPolicy                  -> container.pull: IfNotPresent missing,
//                                        Never never, Always always (absent:
//                                        Berth's default, not Kubernetes')
//   .command + .args                  -> Kubernetes runs command + args; a
//                                        container runs its entrypoint followed
//                                        by the job's command, so command[0] is
//                                        the entrypoint and the rest, then
//                                        args, the command. Only args: the
//                                        image's entrypoint and args as the
//                                        command. Neither: the image's own.
//   .env[].name/.value                -> container.env
//   .workingDir                       -> container.workdir
//   .volumeMounts + spec.volumes[].hostPath -> container.mounts (readOnly,
//                                        subPath appended to the host path)
//   .resources.limits (else .requests, per resource):
//       nvidia.com/gpu -> gpus (whole; none asked: 0, not Berth's default 1)
//       cpu            -> cpus (millicores, rounded up)
//       memory         -> memory (MiB, rounded up)
//   spec.nodeSelector                 -> constraint "k1=v1&k2=v2" (a node's
//                                        label or feature); the label
//                                        kubernetes.io/hostname -> nodelist
//   spec.activeDeadlineSeconds        -> time limit (a Job's own too: the
//                                        smaller of the two)
//   spec.terminationGracePeriodSeconds -> grace
//   Job: spec.parallelism             -> tasks, one gang; spec.completions
//        must be absent or equal to it; spec.backoffLimit -> retries;
//        spec.suspend: true -> held
// Errors (InvalidArgument naming the path): not YAML; not exactly one
// document; an apiVersion/kind other than v1 Pod or batch/v1 Job; no
// container or several; a missing image; env valueFrom and envFrom (Berth
// has no ConfigMaps, Secrets or downward API: a variable the program expects
// would be missing); a mounted volume that is not a hostPath, or a mount of
// an unknown volume; a relative path; a bad quantity, count or boolean;
// requests above limits; GPU requests that differ from the limits.
// Everything else is warned about with its full path and why it has no
// meaning here (e.g. "spec.containers[0].livenessProbe: ignored, Berth has
// no probes"); nothing is dropped silently.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cli/submit_options.h"
#include "common/status.h"

namespace berth::cli {

struct KubeJob {
  SubmitOptions options;
  std::vector<std::string> command;                     // empty: the image's own
  nlohmann::json container = nlohmann::json::object();  // the request's "container"
  std::vector<std::string> warnings;                    // "PATH: ignored, WHY"
};

// The job a manifest describes, or InvalidArgument whose message starts with
// the path of the offending field ("spec.containers[0].image: is required").
Result<KubeJob> ParseKubeManifest(std::string_view yaml);

// The JSON body of POST /api/v1/jobs for `job`: SubmissionBody's own fields
// with `command_line` over the manifest's options, plus "container".
Result<nlohmann::json> KubeSubmissionBody(const KubeJob& job, const SubmitOptions& command_line);

}  // namespace berth::cli
