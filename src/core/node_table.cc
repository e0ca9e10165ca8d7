#include "core/node_table.h"

#include <algorithm>
#include <utility>

#include "common/check.h"

namespace berth::core {

NodeId NodeTable::Add(NodeSpec spec) {
  BERTH_CHECK(spec.gpus.size() <= static_cast<size_t>(kMaxGpusPerNode)) << spec.name;
  for (size_t i = 0; i < spec.gpus.size(); ++i) {
    BERTH_CHECK(spec.gpus[i].index == static_cast<int>(i)) << spec.name << " gpu " << i;
  }
  BERTH_CHECK(!node_ids_.contains(spec.name)) << "duplicate node name " << spec.name;

  auto [it, inserted] =
      type_ids_.try_emplace(spec.gpu_type, static_cast<GpuTypeId>(type_names_.size()));
  if (inserted) {
    type_names_.push_back(spec.gpu_type);
    max_gpus_.push_back(0);
  }
  const GpuTypeId type = it->second;
  const int gpus = static_cast<int>(spec.gpus.size());
  max_gpus_[Index(type)] = std::max(max_gpus_[Index(type)], gpus);
  max_gpus_any_ = std::max(max_gpus_any_, gpus);

  const NodeId id = static_cast<NodeId>(specs_.size());
  node_ids_.emplace(spec.name, id);
  type_of_.push_back(type);
  specs_.push_back(std::move(spec));
  return id;
}

std::optional<NodeId> NodeTable::Find(std::string_view name) const {
  auto it = node_ids_.find(name);
  if (it == node_ids_.end()) return std::nullopt;
  return it->second;
}

std::optional<GpuTypeId> NodeTable::FindType(std::string_view name) const {
  auto it = type_ids_.find(name);
  if (it == type_ids_.end()) return std::nullopt;
  return it->second;
}

}  // namespace berth::core
