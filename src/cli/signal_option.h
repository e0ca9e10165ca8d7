// Slurm's --signal=[{R|B}:]SIG[@secs] (sbatch, #SBATCH, berth submit): the
// signal to send that many seconds (default 60, at most 65535 as Slurm's)
// before the time limit; "B:" sends it to the batch shell only (task 0's
// main process), without it to every process of the job. "R:" (no
// reservation in Berth) is refused by name.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/status.h"

namespace berth::cli {

// The API's `time_limit_signal` object: {"name", "before_s", "batch_only"}.
// Errors name `flag` and the text.
Result<nlohmann::json> ParseSignalOption(std::string_view text, std::string_view flag);

}  // namespace berth::cli
