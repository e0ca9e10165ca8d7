// The job state machine. The names are the stable API words that the server
// and CLI print.
//
//   held --release--> pending --start--> starting --> running --> completing
//     ^                 ^  |                 |            |            |
//     +-----hold--------+  |                 +-------+----+            v
//                          |   preempted (requeued) <+      succeeded | failed
//                          |                                     | timeout
//                          +--cancel--> cancelled  (from any live state)
//   A run stopped at its time limit ends `timeout` (Slurm's TIMEOUT).
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
  kLost,     // its node vanished; the owner requeues or fails it
  kTimeout,  // stopped at its time limit (stored jobs from before this state say failed)
};

std::string_view JobStateName(JobState state);
std::optional<JobState> ParseJobState(std::string_view name);

// Why a job is in its state: the sub-state its record keeps (the store's
// `reason`, the API's "reason" for jobs that are not pending). A closed set
// with stable API names. It is not core::ReasonCode, which says why a pending
// job is not running and is computed afresh by every cycle; the API shows
// that one for pending jobs instead (server::JobView).
enum class JobReason {
  kNone,                      // nothing to add to the state ("")
  kHeld,                      // held by its owner until released
  kDependency,                // held until the jobs it depends on end
  kDependencyNeverSatisfied,  // cancelled: a job it depends on ended the wrong way
  kPreempted,                 // stopped (or stopping) to make room; runs again
  kCancelled,                 // cancelled (or stopping to be) by a user or an admin
  kRetrying,                  // its run failed; waiting to run again (retries left)
  kExited,                    // its tasks exited: exit codes tell success or failure
  kTaskFailed,                // a task of its gang failed: the others are stopped
  kNodeLost,                  // its node was lost: requeued, or failed if it asked
  // Outcomes agents report for a task (protocol::TaskOutcome).
  kTimeLimit,    // it ran past its time limit
  kOutOfMemory,  // a task was killed for using too much memory
  kStartFailed,  // a task could not be started
  kRequeued,     // its owner or an admin requeued it (scontrol requeue): runs again
};

std::string_view JobReasonName(JobReason reason);
// nullopt for a word not in the table.
std::optional<JobReason> ParseJobReason(std::string_view name);

// No transition leaves these.
bool IsTerminal(JobState state);
// The state machine above, as a predicate.
bool CanTransition(JobState from, JobState to);

}  // namespace berth::core
