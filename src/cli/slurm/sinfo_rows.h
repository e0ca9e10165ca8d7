// sinfo's rows: Berth's nodes, in each partition (every queue spans every
// node: Berth's queues share GPUs, not nodes), grouped as Slurm groups
// them (by partition and state, and by CPUs, GPUs and memory when the
// format prints them) or one per node and partition with -N. Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/slurm/percent_format.h"

namespace berth::cli::slurm {

// A node's state in Slurm's words, from the API's node JSON: {long,
// compact}: idle, mixed/mix, allocated/alloc, draining/drng, drained/drain,
// down.
struct NodeState {
  std::string name;
  std::string compact;
};
NodeState MapNodeState(const nlohmann::json& node);

struct SinfoPartition {
  std::string name;
  bool is_default = false;
  std::optional<int64_t> max_time_s;
};

struct SinfoRow {
  SinfoPartition partition;
  NodeState state;
  std::vector<std::string> nodes;
  int64_t cpus = 0;
  std::string gres;  // "gpu:H100-80GB:4", or "(null)"
  int64_t memory_mib = 0;
};

enum class SinfoGrouping { kByPartition, kByNode };

// The rows for `format`'s fields (sinfo letters: P a l D T t N c G m).
std::vector<SinfoRow> SinfoRows(const std::vector<SinfoPartition>& partitions,
                                const std::vector<nlohmann::json>& nodes, SinfoGrouping grouping,
                                const PercentFormat& format);

inline constexpr char kSinfoDefaultFormat[] = "%9P %.5a %.10l %.6D %.6t %N";
// -N: Slurm widens NODELIST and PARTITION to their longest value.
inline constexpr char kSinfoNodeFormat[] = "%N %.6D %.9P %6t";

ParsedFormat ParseSinfoFormat(const std::string& format);
// The header and rows; with -N's default format, the node and partition
// columns as wide as their longest value, as Slurm sizes them.
std::string SinfoHeader(const PercentFormat& format);
std::string SinfoLine(const PercentFormat& format, const SinfoRow& row);
// Slurm sizes the partition column of its default formats to the longest
// name (the default one with its '*'), at least 9; and -N's node column.
void FitDefaultWidths(PercentFormat& format, const std::vector<SinfoRow>& rows, bool node_format);

}  // namespace berth::cli::slurm
