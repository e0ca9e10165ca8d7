// A change to a waiting job's scheduling fields (PATCH /api/v1/jobs/{id};
// Slurm's `scontrol update JobId=N TimeLimit= Partition= Priority=`): the
// body parsed strictly, as a submission is (job_request.h). Who may change
// what is the controller's to decide (Controller::Update).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "core/time.h"
#include "server/job_request.h"

namespace berth::server {

// Only the fields the body names; at least one.
struct JobUpdate {
  std::optional<core::Duration> time_limit;  // "time_limit_s"
  std::optional<std::string> queue;          // "queue"
  std::optional<int32_t> priority;           // "priority": a number or low|normal|high
};

// InvalidArgument naming the field for a bad value, an unknown field or an
// empty body; the bounds are the submission's.
Result<JobUpdate> ParseJobUpdate(std::string_view json_body, const SubmissionLimits& limits = {});

}  // namespace berth::server
