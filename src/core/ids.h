// Identifiers. Strong enum types so a job id can never be passed as a node id.
#pragma once

#include <cstdint>
#include <string>

namespace berth::core {

// Jobs are numbered by whoever owns them (the server's store, the simulator's
// trace order). Ties in every ordering end on the job id.
enum class JobId : int64_t {};

// Nodes are numbered densely in the order they join the cluster; the number is
// the index into the cluster's node table and the last tie-break of placement.
enum class NodeId : int32_t {};

constexpr int64_t Value(JobId id) { return static_cast<int64_t>(id); }
constexpr int32_t Value(NodeId id) { return static_cast<int32_t>(id); }
constexpr size_t Index(NodeId id) { return static_cast<size_t>(id); }

inline std::string ToString(JobId id) { return std::to_string(Value(id)); }

}  // namespace berth::core
