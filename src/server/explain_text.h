// The sentence a person reads for a pending job: the core's reason code
// plus the numbers of the moment (what it asks for, who blocks it, when it
// should start). `berth why`, the API's `message` and the dashboard show it.
#pragma once

#include <string>

#include "core/decision.h"
#include "core/node_filters.h"
#include "core/quota.h"
#include "store/records.h"

namespace berth::server {

// `nodes`, when given, is the node tally behind a reason that the job does
// not fit; its sentence joins the message. `queues`, the queue tree the
// cycle decided on, names the queue whose per-user limit holds the job
// (PendingJob::user_limit); without it the job's own queue is named.
// Its ETA, if it has one, says when it is expected to start and the 80%
// interval around that, in UTC (common/eta_text.h), as of `now`.
std::string DescribePending(const core::PendingJob& pending, const store::JobRecord& job,
                            core::Time now, const core::NodeTally* nodes = nullptr,
                            const core::QuotaTree* queues = nullptr);

// Whether a node tally is of the cluster now or as if every node were up
// and empty.
enum class When { kNow, kEver };

// The node pipeline's tally as a sentence: "0 of 12 nodes can start it now:
// 8 have fewer than 4 free GPUs, 3 have H100-80GB (asked: A100-40GB), 1 is
// draining".
std::string DescribeNodes(const core::NodeTally& tally, const store::JobRequest& request,
                          When when);

// Why a submission is refused: no registered node could ever host it. It
// starts with the field to change and says the largest fit: "gpus: 8 per
// task, but the largest node has 4; ask --nodes 2 --gpus 4 (...)".
std::string DescribeNeverFits(const core::NodeTally& tally, const store::JobRequest& request);

}  // namespace berth::server
