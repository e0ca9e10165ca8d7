// Clock: where the server and agent read the time, so tests can move it.
// The core never reads a clock; its owners pass `now` in.
//
// Two clocks in one: the wall clock (Now) is a label, for people and for
// records; the monotonic clock (Steady) times every timeout and duration,
// since it never steps (issue 32: a wall-clock step of an hour marked every
// node down and charged hours of use for seconds). Tests move them together
// (Advance) or step the wall clock alone (StepWall), as NTP or an operator
// would.
#pragma once

#include <chrono>
#include <mutex>

#include "core/time.h"

namespace berth {

class Clock {
 public:
  virtual ~Clock() = default;
  // Wall-clock time: a label only.
  virtual core::Time Now() const = 0;
  // Monotonic time (CLOCK_MONOTONIC on Linux): for timeouts and durations.
  virtual std::chrono::steady_clock::time_point Steady() const = 0;
};

// The monotonic clock as core::Time (microseconds since an arbitrary
// origin): durations between two readings are exact; the origin means
// nothing.
inline core::Time SteadyTime(std::chrono::steady_clock::time_point at) {
  return core::Time::FromMicros(
      std::chrono::duration_cast<std::chrono::microseconds>(at.time_since_epoch()).count());
}

// Wall-clock time (UTC, microseconds since the epoch) and the system's
// monotonic clock.
class SystemClock final : public Clock {
 public:
  core::Time Now() const override {
    const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
    return core::Time::FromMicros(
        std::chrono::duration_cast<std::chrono::microseconds>(since_epoch).count());
  }
  std::chrono::steady_clock::time_point Steady() const override {
    return std::chrono::steady_clock::now();
  }
};

// A clock that moves only when told to. Thread-safe. Its monotonic time
// starts at an arbitrary point (an hour after the steady clock's origin).
class ManualClock final : public Clock {
 public:
  explicit ManualClock(core::Time start = core::Time::FromSeconds(1'700'000'000)) : now_(start) {}
  core::Time Now() const override {
    std::lock_guard lock(mutex_);
    return now_;
  }
  std::chrono::steady_clock::time_point Steady() const override {
    std::lock_guard lock(mutex_);
    return steady_;
  }
  // Time passes: both clocks move on by `by`.
  void Advance(core::Duration by) {
    std::lock_guard lock(mutex_);
    now_ = now_ + by;
    steady_ += std::chrono::microseconds(by.micros());
  }
  // The wall clock is stepped (by NTP, by an operator), forwards or back:
  // no time passes, the monotonic clock stays where it is.
  void StepWall(core::Duration by) {
    std::lock_guard lock(mutex_);
    now_ = now_ + by;
  }

 private:
  mutable std::mutex mutex_;
  core::Time now_;
  std::chrono::steady_clock::time_point steady_{std::chrono::hours(1)};
};

}  // namespace berth
