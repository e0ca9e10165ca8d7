// `scontrol update JobId=N TimeLimit=T Partition=P Priority=N` read into
// the body of Berth's PATCH /api/v1/jobs/{id} (docs/api.md), and how a
// refusal of it reads in Slurm's words. Pure: scontrol.cc sends it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"

namespace berth::cli::slurm {

struct ScontrolUpdate {
  std::vector<int64_t> jobs;  // JobId=12 or JobId=12,13
  nlohmann::json body;        // time_limit_s, queue, priority
};

// Keys are case-insensitive, as Slurm's. TimeLimit takes Slurm's forms
// (minutes, MM:SS, HH:MM:SS, D-HH[:MM[:SS]]). InvalidArgument with the
// message Slurm prints for a key it cannot update ("Update of this
// parameter is not supported: NumNodes=2") or a bad value.
Result<ScontrolUpdate> ParseScontrolUpdate(const std::vector<std::string>& args);

// Slurm's words for why the server refused a change to a job, then
// Berth's reason: "Access/permission denied (priority: only an admin ...)".
std::string SlurmRefusal(const Status& status);
// Slurm's words alone ("Job is no longer pending execution"), as scontrol
// hold prints them before "for job N".
std::string SlurmWords(const Status& status);

}  // namespace berth::cli::slurm
