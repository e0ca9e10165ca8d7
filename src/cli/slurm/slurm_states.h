// Slurm's job state words as squeue -t, scancel -t and sacct -s take them:
// long names or compact codes, any case, or "all". Pure.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace berth::cli::slurm {

// "pd" and "PENDING" are {"PENDING"}; "all" is every state. InvalidArgument
// for a word Slurm does not know.
Result<std::vector<std::string>> ParseStateFilter(const std::string& word);
// "PENDING,RUNNING,..." as Slurm 22.05 lists them after a bad state.
std::string ValidStateList();
// Slurm's numeric order of the base states (pending first), for sorting.
int StateOrder(const std::string& state);

}  // namespace berth::cli::slurm
