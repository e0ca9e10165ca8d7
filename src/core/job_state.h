// The job state machine. The names are the stable API words that the server
// and CLI print.
//
//   held --release--> pending --start--> starting --> running --> completing
//     ^                 ^  |                 |            |            |
//     +-----hold--------+  |                 +-------+----+            v
//                          |   preempted (requeued) <+      succeeded | failed
//                          +--cancel--> cancelled  (from any live state)
//   A node lost with its job: running --> lost, and the owner requeues
//   (lost --> pending) or fails it.
#pragma once

#include <optional>
#include <string_view>

namespace berth::core {

enum class JobState {
  kPending,   // waiting for the scheduler
  kHeld,      // waiting for a user/admin release or a dependency
  kStarting,  // placed; the agent is launching it
  kRunning,
  kCompleting,  // asked to stop (cancel, preemption, time limit); inside its grace period
  kPreempted,   // stopped to make room; goes back to pending
  kSucceeded,
  kFailed,
  kCancelled,
  kLost,  // its node vanished; the owner requeues or fails it
};

std::string_view JobStateName(JobState state);
std::optional<JobState> ParseJobState(std::string_view name);

// No transition leaves these.
bool IsTerminal(JobState state);
// The state machine above, as a predicate.
bool CanTransition(JobState from, JobState to);

}  // namespace berth::core
