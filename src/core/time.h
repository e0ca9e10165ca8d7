// Time and Duration: int64 microseconds with the unit in the type.
//
// The core never reads a clock: callers pass `now` as a Time. The simulator
// uses trace time; the server uses its injected Clock. Microseconds keep
// sub-second latencies exact while int64 still spans ~292,000 years.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <optional>

namespace berth::core {

class Duration {
 public:
  constexpr Duration() = default;
  static constexpr Duration Micros(int64_t us) { return Duration(us); }
  static constexpr Duration Millis(int64_t ms) { return Duration(ms * 1000); }
  static constexpr Duration Seconds(int64_t s) { return Duration(s * 1'000'000); }
  static constexpr Duration Minutes(int64_t m) { return Seconds(m * 60); }
  static constexpr Duration Hours(int64_t h) { return Seconds(h * 3600); }
  static constexpr Duration Days(int64_t d) { return Seconds(d * 86400); }
  static constexpr Duration Zero() { return Duration(0); }
  static constexpr Duration Max() { return Duration(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t micros() const { return us_; }
  // For reports and floating-point scores only; never for accounting.
  constexpr double seconds() const { return static_cast<double>(us_) / 1e6; }

  constexpr auto operator<=>(const Duration&) const = default;
  constexpr Duration operator+(Duration o) const { return Duration(us_ + o.us_); }
  constexpr Duration operator-(Duration o) const { return Duration(us_ - o.us_); }
  constexpr Duration operator*(int64_t k) const { return Duration(us_ * k); }
  constexpr Duration operator/(int64_t k) const { return Duration(us_ / k); }
  constexpr Duration& operator+=(Duration o) {
    us_ += o.us_;
    return *this;
  }
  constexpr Duration& operator-=(Duration o) {
    us_ -= o.us_;
    return *this;
  }

 private:
  constexpr explicit Duration(int64_t us) : us_(us) {}
  int64_t us_ = 0;
};

// A point in time: microseconds since the Unix epoch (UTC). Traces whose times
// are offsets from their own start map offset 0 to the epoch.
class Time {
 public:
  constexpr Time() = default;
  static constexpr Time FromMicros(int64_t us) { return Time(us); }
  static constexpr Time FromSeconds(int64_t s) { return Time(s * 1'000'000); }
  static constexpr Time Epoch() { return Time(0); }
  // "Never": later than every real time. Used for unknown ETAs and open ends.
  static constexpr Time Infinite() { return Time(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t micros() const { return us_; }
  constexpr double seconds() const { return static_cast<double>(us_) / 1e6; }
  constexpr bool is_infinite() const { return us_ == std::numeric_limits<int64_t>::max(); }

  constexpr auto operator<=>(const Time&) const = default;
  // Saturates at Infinite() so that "never + d" stays "never".
  constexpr Time operator+(Duration d) const {
    if (is_infinite()) return *this;
    if (d.micros() > 0 && us_ > std::numeric_limits<int64_t>::max() - d.micros()) {
      return Infinite();
    }
    return Time(us_ + d.micros());
  }
  constexpr Time operator-(Duration d) const { return Time(us_ - d.micros()); }
  constexpr Duration operator-(Time o) const { return Duration::Micros(us_ - o.us_); }

 private:
  constexpr explicit Time(int64_t us) : us_(us) {}
  int64_t us_ = 0;
};

constexpr Duration Max(Duration a, Duration b) { return a < b ? b : a; }
constexpr Duration Min(Duration a, Duration b) { return a < b ? a : b; }
constexpr Time Max(Time a, Time b) { return a < b ? b : a; }
constexpr Time Min(Time a, Time b) { return a < b ? a : b; }

// Lowers `earliest` to `at` where it is unset or later: the next wake-up of
// several candidates.
constexpr void KeepEarliest(std::optional<Time>& earliest, Time at) {
  if (!earliest || at < *earliest) earliest = at;
}

}  // namespace berth::core
