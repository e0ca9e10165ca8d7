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

}  // namespace berth::core
