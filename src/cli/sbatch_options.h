// Which #SBATCH options exist: the ones Berth reads (submit_options.cc),
// real sbatch options it does not support (warned about by name), and
// anything else, a typo or another tool's option, which is an error with
// the nearest real option as a suggestion (issue 29: `--gpus-per-nod=2`
// silently lost its GPUs).
#pragma once

#include <string>
#include <string_view>

namespace berth::cli {

// A real sbatch option (Slurm 22.05's `sbatch --help`), long or short.
bool IsSbatchOption(std::string_view flag);

// "unknown option --gpus-per-nod (did you mean --gpus-per-node?)".
std::string UnknownSbatchOption(std::string_view flag);

}  // namespace berth::cli
