// Durations on the wire: seconds as a JSON number (30, 0.25), read to the
// microsecond.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/json_fields.h"
#include "common/status.h"
#include "core/time.h"

namespace berth::protocol {

// The longest duration the protocol carries, about 31,700 years.
inline constexpr double kMaxWireSeconds = 1e12;

inline nlohmann::json SecondsJson(core::Duration duration) { return duration.seconds(); }

// 0..kMaxWireSeconds; nullopt when absent or null.
inline Result<std::optional<core::Duration>> ReadSeconds(JsonFields& fields,
                                                         const std::string& key) {
  BERTH_ASSIGN_OR_RETURN(std::optional<double> seconds, fields.Number(key, 0, kMaxWireSeconds));
  if (!seconds) return std::optional<core::Duration>();
  return std::optional(core::Duration::Micros(std::llround(*seconds * 1e6)));
}

}  // namespace berth::protocol
