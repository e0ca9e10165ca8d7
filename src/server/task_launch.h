// How the server tells a node to start a task of a job: the job's record,
// reduced to what the node needs (protocol::TaskLaunch). The one place the
// store's job fields map onto the protocol's.
#pragma once

#include "protocol/task_launch.h"
#include "store/records.h"

namespace berth::server {

// The command or script, env, workdir, time limit and grace of the job's
// request; run as its owner; limited to the CPU and memory `task` asked
// for; in its container, if it asked for one; a Slurm job with its nodes
// (from its placement) and Slurm task layout.
protocol::TaskLaunch TaskLaunchFor(const store::JobRecord& job, int32_t task);

// What a batch job's task other than task 0 runs (JobRequest::batch): a
// holder that waits until it is stopped, so that the task keeps its node's
// share (its cgroup, GPUs and user) for the job's steps. Its output goes to
// the task's log, never to the job's --output file (which it would truncate).
void HoldShareInstead(protocol::TaskLaunch& launch);

}  // namespace berth::server
