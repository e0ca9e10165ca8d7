#include "sim/packing_report.h"

#include <fmt/format.h>

#include <cmath>
#include <string>

namespace berth::sim {
namespace {

double Share(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

double Round(double value, double unit) { return std::round(value / unit) * unit; }

}  // namespace

nlohmann::json ToJson(const PackResult& result) {
  return nlohmann::json{
      {"placement", std::string(PackRuleName(result.rule))},
      {"unallocated_gpu_share", result.unallocated_gpu_share},
      {"total_gpus", result.total_gpus},
      {"allocated_gpu_milli", result.allocated_gpu_milli},
      {"pods_placed", result.pods_placed},
      {"passes", result.passes},
      {"nodes", result.nodes},
      {"cpu_allocated_share",
       Round(Share(result.allocated_cpu_milli, result.total_cpu_milli), 1e-6)},
      {"expected_fragmented_gpus", Round(result.expected_fragmented_gpus, 1e-3)},
      {"never_fit", result.never_fit},
      {"stop", std::string(PackStopName(result.stop))},
  };
}

std::string FormatPackTable(const std::vector<PackResult>& results) {
  std::string out = fmt::format("{:<10} {:>21} {:>10} {:>14} {:>11} {:>6} {:>9}\n", "placement",
                                "unallocated_gpu_share", "total_gpus", "allocated_gpus",
                                "pods_placed", "passes", "frag_gpus");
  for (const PackResult& r : results) {
    out += fmt::format("{:<10} {:>21.4f} {:>10} {:>14.3f} {:>11} {:>6} {:>9.1f}\n",
                       PackRuleName(r.rule), r.unallocated_gpu_share, r.total_gpus,
                       static_cast<double>(r.allocated_gpu_milli) / 1000.0, r.pods_placed, r.passes,
                       r.expected_fragmented_gpus);
  }
  return out;
}

}  // namespace berth::sim
