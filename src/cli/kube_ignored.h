// The fields of a Kubernetes manifest that mean nothing in Berth: each is
// warned about with its full path and why, never dropped silently
// (cli/kube_manifest.h). Pure.
#pragma once

#include <string>
#include <string_view>

#include "cli/kube_manifest.h"
#include "cli/yaml_fields.h"

namespace berth::cli {

// Why a field Berth reads nothing from is ignored, by its name (a name means
// the same wherever it appears in a Pod or a Job): "Berth has no probes";
// for a name not in the table, "it has no meaning in Berth".
std::string WhyKubeFieldIgnored(std::string_view field);

// Adds "PATH: ignored, WHY" to the job's warnings.
void WarnIgnored(KubeJob& job, const std::string& path, std::string_view why);

// Warns about every field of `fields` that nothing read, with its reason.
void WarnUnread(const YamlFields& fields, KubeJob& job);

}  // namespace berth::cli
