#include "core/node.h"

#include <utility>

#include "common/check.h"

namespace berth::core {

std::string_view NodeStateName(NodeState state) {
  switch (state) {
    case NodeState::kUp:
      return "up";
    case NodeState::kDraining:
      return "draining";
    case NodeState::kDown:
      return "down";
  }
  return "unknown";
}

NodeSpec MakeNodeSpec(std::string name, std::string gpu_type, int gpu_count, MilliCpu cpu,
                      MemoryMiB memory) {
  BERTH_CHECK(gpu_count >= 0 && gpu_count <= kMaxGpusPerNode) << gpu_count;
  NodeSpec spec;
  spec.name = std::move(name);
  spec.gpu_type = std::move(gpu_type);
  spec.cpu = cpu;
  spec.memory = memory;
  spec.gpus.reserve(static_cast<size_t>(gpu_count));
  for (int i = 0; i < gpu_count; ++i) spec.gpus.push_back(GpuDevice{i, 0, GpuHealth::kHealthy});
  return spec;
}

}  // namespace berth::core
