// Nodes as the core sees them: typed GPUs with interconnect groups, CPU and
// memory, labels, and an administrative/health state.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/resources.h"

namespace berth::core {

// Nodes carry at most this many GPUs, so a set of a node's GPUs fits in a
// 64-bit mask (GpuMask).
inline constexpr int kMaxGpusPerNode = 64;

enum class NodeState : uint8_t {
  kUp,        // schedulable
  kDraining,  // running work continues; nothing new is placed
  kDown,      // not reachable; nothing is placed and its jobs are requeued by the owner
};
std::string_view NodeStateName(NodeState state);

enum class GpuHealth { kHealthy, kUnhealthy };

struct GpuDevice {
  int index = 0;
  // GPUs in one group talk fast to each other (one NVLink domain or PCIe
  // switch); a task that spans groups pays for it, so placement avoids it.
  int interconnect_group = 0;
  GpuHealth health = GpuHealth::kHealthy;
};

// The static description of a node. All GPUs of one node are one model: the
// machines Berth schedules are built that way, and it lets placement index
// nodes by type.
struct NodeSpec {
  std::string name;
  std::string gpu_type;         // e.g. "H100-80GB"; empty when the node has no GPUs
  std::vector<GpuDevice> gpus;  // gpus[i].index == i
  MilliCpu cpu;
  MemoryMiB memory;
  std::map<std::string, std::string> labels;  // zone, rack, switch, ...
  // What the node offers that jobs may ask for by name (Slurm's node
  // features: "ib", "nvlink", "a100"); constraint.h matches them.
  std::set<std::string, std::less<>> features;
  // Its agent's working container runtime, as it describes it ("podman
  // 4.3.1 (runc, cgroup v1)"); empty: none, and jobs in an image never run
  // here.
  std::string container_runtime;
};

// A node of `gpu_count` GPUs of one type, all in interconnect group 0.
NodeSpec MakeNodeSpec(std::string name, std::string gpu_type, int gpu_count,
                      MilliCpu cpu = MilliCpu(0), MemoryMiB memory = MemoryMiB(0));

}  // namespace berth::core
