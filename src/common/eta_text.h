// One way to say an ETA, wherever it is shown (issue 30): the expected
// start, then the 80% interval,
//   "expected 14:05, 80%: 13:50-14:40"
// The server's sentences (the API's `message`, `berth why`'s first line)
// write times in UTC and say so ("... 13:50-14:40 UTC"); the CLI writes
// local time with its zone, the dashboard the browser's. A time on
// another day than `now` carries its date ("Dec 06 09:10").
#pragma once

#include <cstdio>
#include <ctime>
#include <optional>
#include <string>

#include "core/time.h"

namespace berth {

enum class ClockZone { kUtc, kLocal };

// "14:05" when `time` falls on the same day as `now` (in `zone`), else
// "Dec 06 14:05".
inline std::string ShortClockAt(core::Time time, core::Time now, ClockZone zone) {
  const auto seconds = static_cast<std::time_t>(time.micros() / 1'000'000);
  const auto today_seconds = static_cast<std::time_t>(now.micros() / 1'000'000);
  std::tm at{};
  std::tm today{};
  if (zone == ClockZone::kUtc) {
    ::gmtime_r(&seconds, &at);
    ::gmtime_r(&today_seconds, &today);
  } else {
    ::localtime_r(&seconds, &at);
    ::localtime_r(&today_seconds, &today);
  }
  char buffer[32];
  const bool same_day = at.tm_year == today.tm_year && at.tm_yday == today.tm_yday;
  std::strftime(buffer, sizeof(buffer), same_day ? "%H:%M" : "%b %d %H:%M", &at);
  return buffer;
}

// "expected 14:05, 80%: 13:50-14:40" (no interval: "expected 14:05"),
// followed by " " + `zone_name` when it is not empty.
inline std::string EtaText(core::Time expected, std::optional<core::Time> low,
                           std::optional<core::Time> high, core::Time now, ClockZone zone,
                           const std::string& zone_name) {
  std::string text = "expected " + ShortClockAt(expected, now, zone);
  if (low && high) {
    text += ", 80%: " + ShortClockAt(*low, now, zone) + "-" + ShortClockAt(*high, now, zone);
  }
  if (!zone_name.empty()) text += " " + zone_name;
  return text;
}

}  // namespace berth
