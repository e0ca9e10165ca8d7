#include "core/job_state.h"

#include <array>
#include <utility>

#include "core/enum_names.h"

namespace berth::core {
namespace {

constexpr std::array<std::pair<JobState, std::string_view>, 11> kNames = {{
    {JobState::kPending, "pending"},
    {JobState::kHeld, "held"},
    {JobState::kStarting, "starting"},
    {JobState::kRunning, "running"},
    {JobState::kCompleting, "completing"},
    {JobState::kPreempted, "preempted"},
    {JobState::kSucceeded, "succeeded"},
    {JobState::kFailed, "failed"},
    {JobState::kCancelled, "cancelled"},
    {JobState::kLost, "lost"},
    {JobState::kTimeout, "timeout"},
}};

// The words the store keeps and the API shows: never rename one (stored
// records hold them).
constexpr std::array<std::pair<JobReason, std::string_view>, 14> kReasonNames = {{
    {JobReason::kNone, ""},
    {JobReason::kHeld, "held"},
    {JobReason::kDependency, "dependency"},
    {JobReason::kDependencyNeverSatisfied, "dependency_never_satisfied"},
    {JobReason::kPreempted, "preempted"},
    {JobReason::kCancelled, "cancelled"},
    {JobReason::kRetrying, "retrying"},
    {JobReason::kExited, "exited"},
    {JobReason::kTaskFailed, "task_failed"},
    {JobReason::kNodeLost, "node_lost"},
    {JobReason::kTimeLimit, "time_limit"},
    {JobReason::kOutOfMemory, "out_of_memory"},
    {JobReason::kStartFailed, "start_failed"},
    {JobReason::kRequeued, "requeued"},
}};

}  // namespace

std::string_view JobStateName(JobState state) { return NameIn(kNames, state); }

std::optional<JobState> ParseJobState(std::string_view name) {
  return ValueIn<JobState>(kNames, name);
}

std::string_view JobReasonName(JobReason reason) { return NameIn(kReasonNames, reason); }

std::optional<JobReason> ParseJobReason(std::string_view name) {
  return ValueIn<JobReason>(kReasonNames, name);
}

bool IsTerminal(JobState state) {
  return state == JobState::kSucceeded || state == JobState::kFailed ||
         state == JobState::kCancelled || state == JobState::kTimeout;
}

bool CanTransition(JobState from, JobState to) {
  using S = JobState;
  if (IsTerminal(from)) return false;
  if (to == S::kCancelled) return true;  // any live job can be cancelled
  switch (from) {
    case S::kHeld:
      return to == S::kPending;
    case S::kPending:
      return to == S::kHeld || to == S::kStarting;
    case S::kStarting:
      return to == S::kRunning || to == S::kFailed || to == S::kLost || to == S::kPending;
    case S::kRunning:
      return to == S::kCompleting || to == S::kSucceeded || to == S::kFailed || to == S::kLost ||
             to == S::kPreempted || to == S::kTimeout;
    case S::kCompleting:
      return to == S::kSucceeded || to == S::kFailed || to == S::kPreempted || to == S::kLost ||
             to == S::kTimeout;
    case S::kPreempted:
      return to == S::kPending;
    case S::kLost:
      return to == S::kPending || to == S::kFailed;
    default:
      return false;
  }
}

}  // namespace berth::core
