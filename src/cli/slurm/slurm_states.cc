#include "cli/slurm/slurm_states.h"

#include <strings.h>

#include <array>
#include <utility>

namespace berth::cli::slurm {
namespace {

// Slurm's enum job_states order, then the states that are flags on it, as
// squeue lists them after a bad -t (tests/data/slurm/golden/states.txt).
constexpr std::array<std::pair<const char*, const char*>, 24> kStates = {{
    {"PENDING", "PD"},    {"RUNNING", "R"},       {"SUSPENDED", "S"},     {"COMPLETED", "CD"},
    {"CANCELLED", "CA"},  {"FAILED", "F"},        {"TIMEOUT", "TO"},      {"NODE_FAIL", "NF"},
    {"PREEMPTED", "PR"},  {"BOOT_FAIL", "BF"},    {"DEADLINE", "DL"},     {"OUT_OF_MEMORY", "OOM"},
    {"COMPLETING", "CG"}, {"CONFIGURING", "CF"},  {"RESIZING", "RS"},     {"RESV_DEL_HOLD", "RD"},
    {"REQUEUED", "RQ"},   {"REQUEUE_FED", "RF"},  {"REQUEUE_HOLD", "RH"}, {"REVOKED", "RV"},
    {"SIGNALING", "SI"},  {"SPECIAL_EXIT", "SE"}, {"STAGE_OUT", "SO"},    {"STOPPED", "ST"},
}};

}  // namespace

Result<std::vector<std::string>> ParseStateFilter(const std::string& word) {
  std::vector<std::string> states;
  if (strcasecmp(word.c_str(), "all") == 0) {
    for (const auto& [name, compact] : kStates) states.emplace_back(name);
    return states;
  }
  for (const auto& [name, compact] : kStates) {
    if (strcasecmp(word.c_str(), name) == 0 || strcasecmp(word.c_str(), compact) == 0) {
      states.emplace_back(name);
      return states;
    }
  }
  return InvalidArgument("Invalid job state specified: " + word);
}

std::string ValidStateList() {
  std::string list;
  for (const auto& [name, compact] : kStates) {
    (void)compact;
    list += (list.empty() ? "" : ",") + std::string(name);
  }
  return list;
}

int StateOrder(const std::string& state) {
  // COMPLETING and CONFIGURING are flags on RUNNING to Slurm.
  if (state == "COMPLETING" || state == "CONFIGURING") return 1;
  for (size_t i = 0; i < kStates.size(); ++i) {
    if (state == kStates[i].first) return static_cast<int>(i);
  }
  return static_cast<int>(kStates.size());
}

}  // namespace berth::cli::slurm
