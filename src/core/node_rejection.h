// Why a node cannot host a task of a job: the reason codes of the node
// feasibility pipeline (node_filters.h), one per filter, in the pipeline's
// order. A closed set with stable API names: the explanation API counts
// nodes by them ("rejected": {"gpus": 8, "gpu_model": 3}).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace berth::core {

enum class NodeRejection : uint8_t {
  kDown,      // the node is down
  kDraining,  // the node is draining: running work continues, nothing new starts
  kGpuModel,  // its GPU model is not one the job accepts
  kNodeList,  // the job names the nodes it may use, and not this one
  kExcluded,  // the job excludes this node
  kFeatures,  // the node lacks the features the job's constraint asks for
  // The job runs in a container and the node has no working container
  // runtime (its agent found none at start).
  kContainerRuntime,
  kGpus,    // too few free GPUs (or no device with room for the share)
  kCpu,     // too little free CPU
  kMemory,  // too little free memory
  // The job wants each task's GPUs in one interconnect group (one NVLink
  // island), and no group of the node has that many free.
  kInterconnect,
};
inline constexpr size_t kNodeRejectionCount = 11;

std::string_view NodeRejectionName(NodeRejection rejection);
std::optional<NodeRejection> ParseNodeRejection(std::string_view name);

}  // namespace berth::core
