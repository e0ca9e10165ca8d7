// Summaries as JSON and as a human table.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/metrics.h"

namespace berth::sim {

nlohmann::json ToJson(const Summary& summary);

// One row per policy: JCT and wait statistics in seconds, utilization,
// makespan and JCT over its lower bound.
std::string FormatTable(const std::vector<Summary>& summaries);

}  // namespace berth::sim
