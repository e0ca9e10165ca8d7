// Why a job is not running: a closed set of codes with stable API names
// (printed by the server and CLI, counted in metrics). The human sentence is
// built from the code plus the numbers of the moment, in server/explain_text.h.
#pragma once

#include <optional>
#include <string_view>

namespace berth::core {

enum class ReasonCode {
  kHeld,              // held by a user, an admin or a dependency
  kPriority,          // waiting behind higher-ordered jobs (head-of-line)
  kResources,         // not enough free GPUs/CPU/memory of its kind right now
  kFragmentation,     // enough free GPUs in total, but not on few enough nodes
  kNodesUnavailable,  // every node of its kind is down, draining or unhealthy
  kReserved,          // holds the reservation: starts when its nodes free up
  kReservation,       // could backfill only by delaying the reserved job
  kQuota,             // its queue (or a parent) is at its ceiling
  kUserLimit,         // its user is at a per-user running limit of its queue (or a parent)
  kArrayLimit,        // its job array has as many elements running as its %N allows
  kInfeasible,        // can never fit this cluster as configured
};

std::string_view ReasonName(ReasonCode code);
std::optional<ReasonCode> ParseReason(std::string_view name);

}  // namespace berth::core
