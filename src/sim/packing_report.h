// Packing results (packing.h) as JSON and as a human table.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/packing.h"

namespace berth::sim {

// {"placement", "unallocated_gpu_share", "total_gpus", "allocated_gpu_milli",
//  "pods_placed", "passes", "nodes", "cpu_allocated_share",
//  "expected_fragmented_gpus", "never_fit", "stop"}; placed_per_pass is left
// out (a long tail of passes that each place one small pod).
nlohmann::json ToJson(const PackResult& result);

// One row per placement rule.
std::string FormatPackTable(const std::vector<PackResult>& results);

}  // namespace berth::sim
