// JSON forms of the stored records: the one place that turns JobRecord,
// JobRequest and NodeRecord into JSON and back. Both stores keep these in
// their JSON text columns, and the server may reuse them.
//
// The shapes carry units in field names (`gpu_milli`, `grace_us`, times in
// microseconds since the epoch) and enums as their lower-case API words.
// Reading is strict about types and ranges (an error names the field, e.g.
// `request.tasks: expected an int32, got "two"`) and lenient about absence:
// a missing field takes the record's default, so rows written before a field
// existed still read. Unknown fields are ignored for the same reason, and so
// is a job's `reason` word that this version does not know (it reads as
// core::JobReason::kNone; a server restarted on an older version must still
// load every live job).
// Optional values that are absent are left out when writing.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "common/status.h"
#include "store/records.h"

namespace berth::store {

nlohmann::json JobRequestToJson(const JobRequest& request);
Result<JobRequest> JobRequestFromJson(const nlohmann::json& json);

nlohmann::json JobRecordToJson(const JobRecord& job);
Result<JobRecord> JobRecordFromJson(const nlohmann::json& json);

nlohmann::json NodeRecordToJson(const NodeRecord& node);
Result<NodeRecord> NodeRecordFromJson(const nlohmann::json& json);

// A team queue's governance (shares, per-user limits, submission rules,
// default): the QueueSpec beyond its name, parent, guarantee and ceiling,
// which have columns of their own. Reading sets those keys on `queue`.
nlohmann::json QueueGovernanceToJson(const core::QueueSpec& queue);
Status QueueGovernanceFromJson(const nlohmann::json& json, core::QueueSpec& queue);

// "afterok", "afterany", "afternotok": the words of the API's `depends_on`.
std::string_view DependencyKindWord(DependencyKind kind);
std::optional<DependencyKind> ParseDependencyKindWord(std::string_view word);
// "admin", "user", "agent". (Named apart from server::RoleName so that
// unqualified calls with a store::Role stay unambiguous under ADL.)
std::string_view RoleWord(Role role);
std::optional<Role> ParseRoleWord(std::string_view word);
// "up", "draining", "down" (core::NodeStateName's words, parsed back).
std::optional<core::NodeState> ParseNodeStateWord(std::string_view word);

}  // namespace berth::store
