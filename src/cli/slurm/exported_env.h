// What of the submitting shell's environment reaches a Slurm job: sbatch's
// --export (and SBATCH_EXPORT), whose default, ALL, is what scripts rely on
// (a conda environment's PATH, PYTHONPATH, an exported LR=0.1).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace berth::cli::slurm {

using Environment = std::map<std::string, std::string>;

// The longest value the server takes by default (SubmissionLimits::max_string).
inline constexpr size_t kMaxEnvValue = 4096;

// The variables of `entries` ("NAME=VALUE", as environ holds them) a job
// may carry: all but those each task gets of its own node, job, step and
// user (SLURM_*, BERTH_* (a token among them), CUDA_VISIBLE_DEVICES, ranks,
// MASTER_*, PWD, HOME, USER...), and those the API cannot carry: names outside
// [A-Za-z_][A-Za-z0-9_]* (bash's exported functions, BASH_FUNC_module%%,
// which environment modules set on login nodes) and values longer than
// `max_value` bytes, each of those named in `warnings`.
Environment InheritableEnvironment(const std::vector<std::string>& entries, size_t max_value,
                                   std::vector<std::string>& warnings);

// InheritableEnvironment of this process's own environment.
Environment InheritableShellEnvironment(std::vector<std::string>& warnings);

// --export's value over `inheritable`, as Slurm's sbatch reads it, word by
// word (commas; a value may be quoted): ALL (the default) all of it, NONE
// none, NAME its value if it is set, NAME=VALUE that value; a later word
// wins. InvalidArgument naming --export for an empty word or a bad name.
// Slurm's NONE and lists also load the user's login environment on the
// node (--get-user-env); Berth's tasks get the agent's base environment
// instead (docs/from-slurm.md).
Result<Environment> ExportedEnvironment(std::string_view spec, const Environment& inheritable);

}  // namespace berth::cli::slurm
