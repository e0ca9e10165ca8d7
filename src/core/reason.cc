#include "core/reason.h"

#include <array>
#include <utility>

namespace berth::core {
namespace {

constexpr std::array<std::pair<ReasonCode, std::string_view>, 9> kNames = {{
    {ReasonCode::kHeld, "held"},
    {ReasonCode::kPriority, "priority"},
    {ReasonCode::kResources, "resources"},
    {ReasonCode::kFragmentation, "fragmentation"},
    {ReasonCode::kNodesUnavailable, "nodes_unavailable"},
    {ReasonCode::kReserved, "reserved"},
    {ReasonCode::kReservation, "reservation"},
    {ReasonCode::kPreempting, "preempting"},
    {ReasonCode::kInfeasible, "infeasible"},
}};

}  // namespace

std::string_view ReasonName(ReasonCode code) {
  for (const auto& [value, name] : kNames) {
    if (value == code) return name;
  }
  return "unknown";
}

std::optional<ReasonCode> ParseReason(std::string_view name) {
  for (const auto& [value, text] : kNames) {
    if (text == name) return value;
  }
  return std::nullopt;
}

}  // namespace berth::core
