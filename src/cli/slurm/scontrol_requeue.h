// scontrol requeue JOB_LIST: stops each running job and queues it again;
// its next run sees SLURM_RESTART_COUNT one higher (docs/from-slurm.md).
#pragma once

#include <string>
#include <vector>

namespace berth::cli::slurm {

// `args`: what followed "requeue" ("12,13_2", or "Incomplete 12" as Slurm
// also takes). Returns scontrol's exit code.
int ScontrolRequeue(const std::string& command, const std::vector<std::string>& args);

}  // namespace berth::cli::slurm
