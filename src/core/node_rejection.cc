#include "core/node_rejection.h"

#include <array>
#include <utility>

#include "core/enum_names.h"

namespace berth::core {
namespace {

constexpr std::array<std::pair<NodeRejection, std::string_view>, kNodeRejectionCount> kNames = {{
    {NodeRejection::kDown, "down"},
    {NodeRejection::kDraining, "draining"},
    {NodeRejection::kGpuModel, "gpu_model"},
    {NodeRejection::kNodeList, "nodelist"},
    {NodeRejection::kExcluded, "excluded"},
    {NodeRejection::kFeatures, "features"},
    {NodeRejection::kContainerRuntime, "container_runtime"},
    {NodeRejection::kGpus, "gpus"},
    {NodeRejection::kCpu, "cpu"},
    {NodeRejection::kMemory, "memory"},
    {NodeRejection::kInterconnect, "interconnect"},
}};

}  // namespace

std::string_view NodeRejectionName(NodeRejection rejection) { return NameIn(kNames, rejection); }

std::optional<NodeRejection> ParseNodeRejection(std::string_view name) {
  return ValueIn<NodeRejection>(kNames, name);
}

}  // namespace berth::core
