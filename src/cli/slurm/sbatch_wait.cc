#include "cli/slurm/sbatch_wait.h"

#include <algorithm>
#include <string>

#include "cli/api_client.h"
#include "cli/slurm/slurm_job.h"

namespace berth::cli::slurm {

std::optional<int> WaitedExitCode(const std::vector<nlohmann::json>& jobs) {
  int highest = 0;
  for (const nlohmann::json& job : jobs) {
    if (!EndedState(job.value("state", ""))) return std::nullopt;
    // Slurm's sbatch takes WEXITSTATUS of an exited job and 1 for any
    // other, reading the same "code:signal" that sacct shows.
    const std::string code = SlurmJobFromJson(job, "").exit_code;
    const size_t colon = code.find(':');
    const bool signalled = colon != std::string::npos && code.substr(colon + 1) != "0";
    int exited = signalled ? 1 : std::stoi(code.substr(0, colon)) & 0xff;
    // Failed with no code of its own (its node lost, its start failed):
    // never a success to the script that waits.
    if (exited == 0 && job.value("state", "") == "failed") exited = 1;
    highest = std::max(highest, exited);
  }
  return highest;
}

}  // namespace berth::cli::slurm
