#include "cli/slurm/sinfo_rows.h"

#include <algorithm>
#include <tuple>

namespace berth::cli::slurm {

using nlohmann::json;

NodeState MapNodeState(const json& node) {
  const std::string state = node.value("state", "");
  int64_t total = 0;
  int64_t busy = 0;
  if (const auto it = node.find("gpus"); it != node.end() && it->is_array()) {
    for (const json& gpu : *it) {
      ++total;
      if (gpu.contains("job") && gpu["job"].is_number()) ++busy;
    }
  }
  if (state == "down") return {"down", "down"};
  if (state == "draining" || node.value("drained", false)) {
    return busy > 0 ? NodeState{"draining", "drng"} : NodeState{"drained", "drain"};
  }
  if (busy == 0) return {"idle", "idle"};
  if (busy < total) return {"mixed", "mix"};
  return {"allocated", "alloc"};
}

namespace {

enum SinfoField {
  kPartition,
  kAvail,
  kTimeLimit,
  kNodeCount,
  kStateLong,
  kStateCompact,
  kNodeList,
  kCpus,
  kGres,
  kMemory,
  kFieldCount
};
constexpr char kLetters[kFieldCount] = {'P', 'a', 'l', 'D', 'T', 't', 'N', 'c', 'G', 'm'};
constexpr const char* kHeaders[kFieldCount] = {"PARTITION", "AVAIL", "TIMELIMIT", "NODES",
                                               "STATE",     "STATE", "NODELIST",  "CPUS",
                                               "GRES",      "MEMORY"};

std::string Gres(const json& node) {
  const size_t gpus = node.contains("gpus") && node["gpus"].is_array() ? node["gpus"].size() : 0;
  if (gpus == 0) return "(null)";
  const std::string type = node.value("gpu_type", "");
  return "gpu:" + (type.empty() ? "" : type + ":") + std::to_string(gpus);
}

bool Prints(const PercentFormat& format, SinfoField field) {
  return std::any_of(format.fields.begin(), format.fields.end(),
                     [field](const FormatField& f) { return f.index == field; });
}

std::string Value(const SinfoRow& row, int field) {
  switch (field) {
    case kPartition:
      return row.partition.name + (row.partition.is_default ? "*" : "");
    case kAvail:
      return "up";
    case kTimeLimit:
      return row.partition.max_time_s ? SlurmDuration(*row.partition.max_time_s) : "infinite";
    case kNodeCount:
      return std::to_string(row.nodes.size());
    case kStateLong:
      return row.state.name;
    case kStateCompact:
      return row.state.compact;
    case kNodeList:
      return CompressHostlist(row.nodes);
    case kCpus:
      return std::to_string(row.cpus);
    case kGres:
      return row.gres;
    case kMemory:
      return std::to_string(row.memory_mib);
    default:
      return "";
  }
}

std::string Render(const PercentFormat& format, const std::function<std::string(int)>& text) {
  std::string line = format.prefix;
  for (const FormatField& field : format.fields) {
    if (field.index >= 0) {
      // Slurm cuts every sinfo field but the node list's header.
      line += PadField(text(field.index), field.width, field.justify, Cut::kYes);
    }
    line += field.suffix;
  }
  return line + "\n";
}

}  // namespace

ParsedFormat ParseSinfoFormat(const std::string& format) {
  return ParsePercentFormat(format, [](char letter) {
    for (int i = 0; i < kFieldCount; ++i) {
      if (kLetters[i] == letter) return i;
    }
    return -1;
  });
}

std::vector<SinfoRow> SinfoRows(const std::vector<SinfoPartition>& partitions,
                                const std::vector<json>& nodes, SinfoGrouping grouping,
                                const PercentFormat& format) {
  const bool by_cpus = Prints(format, kCpus);
  const bool by_gres = Prints(format, kGres);
  const bool by_memory = Prints(format, kMemory);
  std::vector<SinfoRow> rows;
  for (const SinfoPartition& partition : partitions) {
    for (const json& node : nodes) {
      SinfoRow row;
      row.partition = partition;
      row.state = MapNodeState(node);
      row.nodes = {node.value("name", "")};
      row.cpus = node.value("cpu_milli", int64_t{0}) / 1000;
      row.gres = Gres(node);
      row.memory_mib = node.value("memory_mib", int64_t{0});
      if (grouping == SinfoGrouping::kByPartition) {
        auto same = std::find_if(rows.begin(), rows.end(), [&](const SinfoRow& other) {
          return other.partition.name == partition.name && other.state.name == row.state.name &&
                 (!by_cpus || other.cpus == row.cpus) && (!by_gres || other.gres == row.gres) &&
                 (!by_memory || other.memory_mib == row.memory_mib);
        });
        if (same != rows.end()) {
          same->nodes.push_back(row.nodes[0]);
          continue;
        }
      }
      rows.push_back(std::move(row));
    }
  }
  if (grouping == SinfoGrouping::kByNode) {
    // Slurm's -N lists by node name, each node's partitions in order.
    std::stable_sort(rows.begin(), rows.end(),
                     [](const SinfoRow& a, const SinfoRow& b) { return a.nodes[0] < b.nodes[0]; });
  }
  return rows;
}

std::string SinfoHeader(const PercentFormat& format) {
  return Render(format, [](int field) { return std::string(kHeaders[field]); });
}

std::string SinfoLine(const PercentFormat& format, const SinfoRow& row) {
  return Render(format, [&](int field) { return Value(row, field); });
}

void FitDefaultWidths(PercentFormat& format, const std::vector<SinfoRow>& rows, bool node_format) {
  size_t partition = 9;
  size_t node = 9;  // Slurm's MIN_NODE_FIELD_SIZE
  for (const SinfoRow& row : rows) {
    partition = std::max(partition, Value(row, kPartition).size());
    node = std::max(node, Value(row, kNodeList).size());
  }
  for (FormatField& field : format.fields) {
    if (field.index == kPartition) field.width = static_cast<int>(partition);
    if (node_format && field.index == kNodeList) field.width = static_cast<int>(node);
  }
}

}  // namespace berth::cli::slurm
