// What a job's tasks' ends make of its run: whether a task failed, the
// job's sub-state (core::JobReason) and the sentence people read. The agent
// reports each task's outcome and message (protocol::TaskReport); a task
// stopped at its time limit or by the OOM killer fails the run whatever
// its exit code, as in Slurm (TIMEOUT, OUT_OF_MEMORY).
#pragma once

#include <string>

#include "core/job_state.h"
#include "protocol/node_report.h"
#include "store/records.h"

namespace berth::server {

// Whether the task's end fails its job's run.
bool TaskFailed(const protocol::TaskReport& exit);

// The failed job's sub-state from its first failed task's outcome.
core::JobReason FailureReason(protocol::TaskOutcome outcome);

// "out of memory: limit 64 MiB", "exited with code 3"; a gang's names the
// task and its node: "task 2 on gpu-07: killed by signal 9".
std::string FailureMessage(const store::JobRecord& job, int32_t task,
                           const protocol::TaskReport& exit);

// The final message of a run cancelled while it ran, once its tasks
// ended: the cancel's own words without its "; stopping", then how the
// task (task 0 for a gang, as Slurm's batch step) ended: "cancelled by
// alice; exited with code 143".
std::string CancelledMessage(const store::JobRecord& job, int32_t task,
                             const protocol::TaskReport& exit);

}  // namespace berth::server
