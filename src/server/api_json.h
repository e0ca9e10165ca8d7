// The JSON shapes of the user API: jobs, explanations and nodes going out,
// queues and list filters coming in. Parsing is strict: unknown fields and
// wrong types are InvalidArgument naming the field. The agent protocol's
// JSON is protocol/ (report_json.h, desired_json.h).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "server/controller.h"
#include "server/history.h"
#include "store/records.h"

namespace berth::server {

// Who reads a job: its owner or an admin sees all of it; anyone else sees
// neither its command or script nor its environment and working directory.
enum class Reader { kOwnerOrAdmin, kOther };

// A job as the API shows it to `reader`.
// `pending`: the last cycle's view of a pending job (queue position, ETA).
nlohmann::json JobJson(const JobView& job, Reader reader,
                       const core::PendingJob* pending = nullptr);
nlohmann::json ExplanationJson(const Explanation& explanation, Reader reader);
// {"total": 12, "fit": 0, "rejected": {"gpus": 8, "gpu_model": 3, "draining": 1}}:
// nodes by the first filter of the node pipeline that rejected them.
nlohmann::json NodeTallyJson(const core::NodeTally& tally);
nlohmann::json NodeJson(const NodeView& node);

// GET /api/v1/history: the samples, how often they are taken and how many
// are kept, and the wait buckets' upper bounds.
nlohmann::json HistoryJson(const std::vector<HistorySample>& samples, core::Duration every,
                           size_t capacity);

// PUT /api/v1/queues: {"queues": [{"name", "parent", "guaranteed_gpus", "ceiling_gpus"}]}.
Result<std::vector<core::QueueSpec>> ParseQueues(const nlohmann::json& body);
// A queue's governance keys as GET /api/v1/queues shows them (and PUT
// takes them): shares, limits (null: none), submission rules, default.
nlohmann::json QueueGovernanceJson(const core::QueueSpec& spec);

// GET /api/v1/jobs query parameters: which jobs (state, user, queue, live,
// after, limit), and whether each of the reader's own carries its steps
// (steps=true: sacct reads a day of jobs and their steps in one request).
struct JobListQuery {
  store::JobFilter filter;
  bool with_steps = false;
};
Result<JobListQuery> ParseJobListQuery(const std::multimap<std::string, std::string>& params);

}  // namespace berth::server
