// sbatch -W/--wait: sbatch does not exit until the job it submitted has
// ended, and exits with the job's exit code, as Slurm 22.05's does: the
// code the job exited with, 1 for a job ended by a signal, and for an array
// the highest over its elements. Pure: sbatch polls the jobs and asks this.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

namespace berth::cli::slurm {

// `jobs` as the API shows them (GET /api/v1/jobs/ID): nullopt while any of
// them has not ended; else sbatch --wait's exit code. A job that ended
// without running (cancelled while pending) counts 0, as its Slurm exit
// code 0:0 does; one that failed with no code (its node lost) counts 1.
std::optional<int> WaitedExitCode(const std::vector<nlohmann::json>& jobs);

}  // namespace berth::cli::slurm
