// The variables Slurm gives every element of a job array that are the same
// for all of them: SLURM_ARRAY_TASK_MIN, _MAX, _COUNT and _STEP, from the
// --array spec sbatch was given ("0-9", "1,3,5-7", "0-15:4", "%N" after).
// The element's own SLURM_ARRAY_TASK_ID and SLURM_ARRAY_JOB_ID come from
// the node (agent/task_env.h). Pure.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace berth::cli::slurm {

// None for a spec it cannot read: the server names what is wrong with it.
// The step is the spec's when its indices are evenly spaced, else 1.
std::optional<std::map<std::string, std::string>> ArrayEnvironment(std::string_view spec);

}  // namespace berth::cli::slurm
