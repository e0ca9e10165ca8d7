#include "server/run_outcome.h"

#include <string_view>

namespace berth::server {

using protocol::TaskOutcome;

bool TaskFailed(const protocol::TaskReport& exit) {
  switch (exit.outcome) {
    case TaskOutcome::kTimeLimit:
    case TaskOutcome::kOutOfMemory:
    case TaskOutcome::kStartFailed:
    case TaskOutcome::kLost:
    case TaskOutcome::kLeaseExpired:
      return true;
    case TaskOutcome::kExited:
    case TaskOutcome::kStopped:
      break;
  }
  return exit.exit_code.value_or(-1) != 0;
}

core::JobReason FailureReason(TaskOutcome outcome) {
  switch (outcome) {
    case TaskOutcome::kTimeLimit:
      return core::JobReason::kTimeLimit;
    case TaskOutcome::kOutOfMemory:
      return core::JobReason::kOutOfMemory;
    case TaskOutcome::kStartFailed:
      return core::JobReason::kStartFailed;
    case TaskOutcome::kLeaseExpired:
      return core::JobReason::kNodeLost;
    case TaskOutcome::kExited:
    case TaskOutcome::kStopped:
    case TaskOutcome::kLost:
      break;
  }
  return core::JobReason::kExited;
}

std::string FailureMessage(const store::JobRecord& job, int32_t task,
                           const protocol::TaskReport& exit) {
  std::string what = exit.message;
  if (what.empty() && exit.outcome == TaskOutcome::kTimeLimit) what = "ran past its time limit";
  if (what.empty() && exit.exit_code) what = "exited with code " + std::to_string(*exit.exit_code);
  if (what.empty() && exit.signal) what = "killed by signal " + std::to_string(*exit.signal);
  if (job.request.tasks > 1 && task >= 0 && static_cast<size_t>(task) < job.placement.size()) {
    what = "task " + std::to_string(task) + " on " + job.placement[static_cast<size_t>(task)].node +
           ": " + what;
  }
  return what;
}

std::string CancelledMessage(const store::JobRecord& job, int32_t task,
                             const protocol::TaskReport& exit) {
  constexpr std::string_view kStopping = "; stopping";
  std::string said = job.message;
  if (said.ends_with(kStopping)) said.resize(said.size() - kStopping.size());
  if (said.empty()) said = "cancelled";
  protocol::TaskReport ended = exit;
  ended.message.clear();  // the supervisor's "stop requested" note is the cancel itself
  const std::string how = FailureMessage(job, task, ended);
  return how.empty() ? said : said + "; " + how;
}

}  // namespace berth::server
