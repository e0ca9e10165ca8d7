#include "sim/cluster_spec.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <optional>
#include <set>

#include "core/constraint.h"
#include "core/node.h"

namespace berth::sim {
namespace {

std::optional<int> ParsePositive(std::string_view text, int max) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 1 || value > max) {
    return std::nullopt;
  }
  return value;
}

std::string NodeName(std::string_view prefix, size_t index) {
  std::string number = std::to_string(index);
  if (number.size() < 4) number.insert(0, 4 - number.size(), '0');
  return std::string(prefix) + number;
}

std::vector<core::NodeSpec> MakeNodes(std::string_view prefix, int count, int gpus,
                                      const std::string& type) {
  std::vector<core::NodeSpec> nodes;
  nodes.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    nodes.push_back(core::MakeNodeSpec(NodeName(prefix, static_cast<size_t>(i)), type, gpus));
  }
  return nodes;
}

std::string Trim(std::string text) {
  const auto first = text.find_first_not_of(" \t\r");
  const auto last = text.find_last_not_of(" \t\r");
  return first == std::string::npos ? "" : text.substr(first, last - first + 1);
}

}  // namespace

namespace {

// One group of a pool: "NODESxGPUSxTYPE" or "NODESxGPUSxTYPE[f1,f2]".
Status ParseGroup(std::string_view group, const std::string& whole, Partition& pool) {
  std::string text(group);
  const std::string usage =
      "--cluster: expected NODESxGPUSxTYPE[FEATURES] groups joined by '+' "
      "such as 80x8xP100 or 40x8xA100[ib]+8x8xH100[ib,nvlink], got '" +
      whole + "'";
  std::set<std::string, std::less<>> features;
  if (const size_t open = text.find('['); open != std::string::npos) {
    if (text.back() != ']') return InvalidArgument(usage + " (features end with ']')");
    const std::string list = text.substr(open + 1, text.size() - open - 2);
    for (size_t start = 0; start <= list.size();) {
      const size_t comma = std::min(list.find(',', start), list.size());
      const std::string feature = list.substr(start, comma - start);
      if (!core::IsFeatureName(feature)) {
        return InvalidArgument(usage + " ('" + feature + "' is not a feature name)");
      }
      features.insert(feature);
      start = comma + 1;
    }
    text.resize(open);
  }
  const size_t x1 = text.find('x');
  const size_t x2 = x1 == std::string::npos ? x1 : text.find('x', x1 + 1);
  if (x2 == std::string::npos || x2 + 1 >= text.size()) return InvalidArgument(usage);
  const auto nodes = ParsePositive(std::string_view(text).substr(0, x1), 1'000'000);
  const auto gpus =
      ParsePositive(std::string_view(text).substr(x1 + 1, x2 - x1 - 1), core::kMaxGpusPerNode);
  if (!nodes) return InvalidArgument(usage + " (node count must be 1..1000000)");
  if (!gpus) {
    return InvalidArgument(usage + " (GPUs per node must be 1.." +
                           std::to_string(core::kMaxGpusPerNode) + ")");
  }
  if (pool.nodes.size() + static_cast<size_t>(*nodes) > 1'000'000) {
    return InvalidArgument(usage + " (at most 1000000 nodes in all)");
  }
  const std::string type = text.substr(x2 + 1);
  for (int i = 0; i < *nodes; ++i) {
    core::NodeSpec node = core::MakeNodeSpec(NodeName("node", pool.nodes.size()), type, *gpus);
    node.features = features;
    pool.nodes.push_back(std::move(node));
  }
  return Status::Ok();
}

}  // namespace

Result<Partition> ParsePool(std::string_view shape) {
  const std::string whole(shape);
  Partition pool;
  for (size_t start = 0; start <= shape.size();) {
    const size_t plus = std::min(shape.find('+', start), shape.size());
    BERTH_RETURN_IF_ERROR(ParseGroup(shape.substr(start, plus - start), whole, pool));
    start = plus + 1;
  }
  return pool;
}

Result<std::vector<VcSize>> ReadVcSizes(const std::string& path, std::string_view flag) {
  std::ifstream in(path);
  if (!in) return NotFound(std::string(flag) + ": cannot open " + path);
  std::string line;
  std::getline(in, line);
  if (Trim(line) != "vc,node num") {
    return InvalidArgument(path + ":1: expected the header 'vc,node num', got '" + Trim(line) +
                           "'");
  }
  std::vector<VcSize> sizes;
  std::set<std::string> seen;
  for (int number = 2; std::getline(in, line); ++number) {
    line = Trim(line);
    if (line.empty()) continue;
    const size_t comma = line.find(',');
    const std::string where = path + ":" + std::to_string(number) + ": ";
    if (comma == std::string::npos) return InvalidArgument(where + "expected 'vc,node num'");
    std::string vc = Trim(line.substr(0, comma));
    const auto count = ParsePositive(Trim(line.substr(comma + 1)), 1'000'000);
    if (vc.empty()) return InvalidArgument(where + "empty vc name");
    if (!count) return InvalidArgument(where + "node num must be a positive integer");
    if (!seen.insert(vc).second) return InvalidArgument(where + "vc '" + vc + "' listed twice");
    sizes.push_back(VcSize{std::move(vc), *count});
  }
  if (sizes.empty()) return InvalidArgument(path + ": no virtual clusters listed");
  return sizes;
}

Result<std::vector<Partition>> ReadVcPartitions(const std::string& path, int gpus_per_node,
                                                const std::string& gpu_type) {
  if (gpus_per_node < 1 || gpus_per_node > core::kMaxGpusPerNode) {
    return InvalidArgument("--gpus-per-node: must be 1.." + std::to_string(core::kMaxGpusPerNode) +
                           ", got " + std::to_string(gpus_per_node));
  }
  Result<std::vector<VcSize>> sizes = ReadVcSizes(path, "--vc-nodes");
  if (!sizes.ok()) return sizes.status();
  std::vector<Partition> partitions;
  for (const VcSize& vc : *sizes) {
    partitions.push_back(
        Partition{vc.name, MakeNodes(vc.name + "-node", vc.nodes, gpus_per_node, gpu_type)});
  }
  return partitions;
}

Result<std::vector<core::QueueSpec>> ReadVcQuotas(const std::string& path, int64_t cluster_gpus) {
  Result<std::vector<VcSize>> sizes = ReadVcSizes(path, "--vc-quotas");
  if (!sizes.ok()) return sizes.status();
  int64_t total_nodes = 0;
  for (const VcSize& vc : *sizes) total_nodes += vc.nodes;
  std::vector<core::QueueSpec> queues;
  for (const VcSize& vc : *sizes) {
    // Whole GPUs, rounded down, so the guarantees never exceed the cluster.
    core::QueueSpec queue;
    queue.name = vc.name;
    queue.guaranteed = core::WholeGpus(cluster_gpus * vc.nodes / total_nodes);
    queues.push_back(std::move(queue));
  }
  return queues;
}

}  // namespace berth::sim
