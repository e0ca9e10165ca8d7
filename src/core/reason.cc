#include "core/reason.h"

#include <array>
#include <utility>

#include "core/enum_names.h"

namespace berth::core {
namespace {

constexpr std::array<std::pair<ReasonCode, std::string_view>, 11> kNames = {{
    {ReasonCode::kHeld, "held"},
    {ReasonCode::kPriority, "priority"},
    {ReasonCode::kResources, "resources"},
    {ReasonCode::kFragmentation, "fragmentation"},
    {ReasonCode::kNodesUnavailable, "nodes_unavailable"},
    {ReasonCode::kReserved, "reserved"},
    {ReasonCode::kReservation, "reservation"},
    {ReasonCode::kQuota, "quota"},
    {ReasonCode::kUserLimit, "user_limit"},
    {ReasonCode::kArrayLimit, "array_limit"},
    {ReasonCode::kInfeasible, "infeasible"},
}};

}  // namespace

std::string_view ReasonName(ReasonCode code) { return NameIn(kNames, code); }

std::optional<ReasonCode> ParseReason(std::string_view name) {
  return ValueIn<ReasonCode>(kNames, name);
}

}  // namespace berth::core
