// Where a job's tasks go: for each task, a node and the exact GPUs on it, so
// the agent can set CUDA_VISIBLE_DEVICES from the placement.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include "core/ids.h"
#include "core/resources.h"

namespace berth::core {

// Bit i set = GPU index i of a node.
using GpuMask = uint64_t;

inline int CountGpus(GpuMask mask) { return std::popcount(mask); }

struct TaskPlacement {
  NodeId node{};
  // Whole-GPU task: the devices it owns. Share task: exactly one device.
  // CPU-only task: empty.
  GpuMask gpus = 0;

  bool operator==(const TaskPlacement&) const = default;
};

// A whole job's placement; tasks[i] is rank i.
struct Placement {
  // Every task's shape, unless `task_shapes` gives each its own.
  TaskShape shape;
  std::vector<TaskPlacement> tasks;
  TaskShapes task_shapes = nullptr;  // null, or one per task

  bool empty() const { return tasks.empty(); }
  const TaskShape& ShapeOf(size_t task) const { return task_shapes ? (*task_shapes)[task] : shape; }
  // Distinct nodes, ascending.
  std::vector<NodeId> Nodes() const;
  // GPU thousandths held by the whole job.
  MilliGpu TotalGpu() const;

  // Equal tasks in equal shapes (per-task shapes compared by value).
  bool operator==(const Placement& other) const;
};

}  // namespace berth::core
