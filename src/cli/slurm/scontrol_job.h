// `scontrol show job`'s key=value form of a job, Slurm's keys where Berth
// has the same thing (docs/from-slurm.md lists the rest). Pure but for
// times, which print in local time as Slurm's do.
#pragma once

#include <string>

#include "cli/slurm/slurm_job.h"

namespace berth::cli::slurm {

enum class Lines { kMany, kOne };  // scontrol's default, or -o

// Ends in '\n'. `uid` is the job user's id here ("alice(1001)"), or empty.
std::string ScontrolJob(const SlurmJob& job, core::Time now, const std::string& uid, Lines lines);

}  // namespace berth::cli::slurm
