// The words the controller's refusals share, so that every one names a job
// and its state alike ("job 12 is not running (state pending): ...").
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "core/ids.h"
#include "core/job_state.h"

namespace berth::server {

inline std::string JobName(core::JobId id) { return "job " + std::to_string(core::Value(id)); }

// FailedPrecondition: the job is not running, in `state`; `why` (if any)
// says what only a running job may do.
inline Status NotRunning(core::JobId id, core::JobState state, std::string_view why = {}) {
  std::string message =
      JobName(id) + " is not running (state " + std::string(core::JobStateName(state)) + ")";
  if (!why.empty()) message += ": " + std::string(why);
  return FailedPrecondition(std::move(message));
}

}  // namespace berth::server
