// Clock: where the server and agent read the time, so tests can move it.
// The core never reads a clock; its owners pass `now` in.
#pragma once

#include <chrono>
#include <mutex>

#include "core/time.h"

namespace berth {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual core::Time Now() const = 0;
};

// Wall-clock time (UTC, microseconds since the epoch).
class SystemClock final : public Clock {
 public:
  core::Time Now() const override {
    const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
    return core::Time::FromMicros(
        std::chrono::duration_cast<std::chrono::microseconds>(since_epoch).count());
  }
};

// A clock that moves only when told to. Thread-safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(core::Time start = core::Time::FromSeconds(1'700'000'000)) : now_(start) {}
  core::Time Now() const override {
    std::lock_guard lock(mutex_);
    return now_;
  }
  void Advance(core::Duration by) {
    std::lock_guard lock(mutex_);
    now_ = now_ + by;
  }

 private:
  mutable std::mutex mutex_;
  core::Time now_;
};

}  // namespace berth
