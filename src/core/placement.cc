#include "core/placement.h"

#include <algorithm>

namespace berth::core {

std::vector<NodeId> Placement::Nodes() const {
  std::vector<NodeId> nodes;
  nodes.reserve(tasks.size());
  for (const TaskPlacement& task : tasks) nodes.push_back(task.node);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

MilliGpu Placement::TotalGpu() const {
  if (!task_shapes) return shape.gpu * static_cast<int64_t>(tasks.size());
  MilliGpu total;
  for (size_t task = 0; task < tasks.size(); ++task) total += ShapeOf(task).gpu;
  return total;
}

bool Placement::operator==(const Placement& other) const {
  if (shape != other.shape || tasks != other.tasks) return false;
  for (size_t task = 0; task < tasks.size(); ++task) {
    if (ShapeOf(task) != other.ShapeOf(task)) return false;
  }
  return true;
}

}  // namespace berth::core
