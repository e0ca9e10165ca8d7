// The cluster's nodes, numbered densely by NodeId, with GPU models interned
// to small integers so placement can index nodes by (model, free GPUs).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "core/node.h"

namespace berth::core {

// Interned GPU model. Nodes without GPUs get the model of the empty string.
enum class GpuTypeId : int32_t {};
constexpr size_t Index(GpuTypeId id) { return static_cast<size_t>(id); }

class NodeTable {
 public:
  // REQUIRES: spec.gpus[i].index == i and at most kMaxGpusPerNode GPUs.
  NodeId Add(NodeSpec spec);

  size_t size() const { return specs_.size(); }
  const NodeSpec& spec(NodeId id) const { return specs_[Index(id)]; }
  NodeSpec& mutable_spec(NodeId id) { return specs_[Index(id)]; }
  GpuTypeId type_of(NodeId id) const { return type_of_[Index(id)]; }
  std::optional<NodeId> Find(std::string_view name) const;

  size_t type_count() const { return type_names_.size(); }
  const std::string& type_name(GpuTypeId id) const { return type_names_[Index(id)]; }
  std::optional<GpuTypeId> FindType(std::string_view name) const;
  // Largest GPU count of any node of this model (0 if there is none).
  int max_gpus(GpuTypeId id) const { return max_gpus_[Index(id)]; }
  int max_gpus_any() const { return max_gpus_any_; }

 private:
  std::vector<NodeSpec> specs_;
  std::vector<GpuTypeId> type_of_;
  std::vector<std::string> type_names_;
  std::map<std::string, GpuTypeId, std::less<>> type_ids_;
  std::map<std::string, NodeId, std::less<>> node_ids_;
  std::vector<int> max_gpus_;
  int max_gpus_any_ = 0;
};

}  // namespace berth::core
