// The history behind the dashboard's charts: a bounded in-memory ring of
// cluster samples (queue length, running jobs, GPUs allocated, and the
// queue waits of the jobs that started in each interval).
//
//   scheduler loop, every `interval`:
//     Controller::GetStats() + Controller::TakeStartWaits() -> HistorySample
//       -> History::Record (oldest sample dropped when full)
//   GET /api/v1/history?since=T -> History::Since(T)
//
// The history is not persisted: a restarted server starts a fresh one (the
// durable record of the cluster is in Prometheus, see docs/operations.md).
// No I/O here.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <vector>

#include "core/time.h"

namespace berth::server {

// Queue waits (submission to first start) counted in fixed buckets, so a
// burst of thousands of starts costs no more memory than one. Integer
// accounting throughout: microseconds and counts.
class WaitHistogram {
 public:
  // Upper bounds (inclusive) of the buckets in seconds; a last bucket
  // counts the waits above the largest bound.
  static constexpr std::array<int64_t, 13> kBoundsSeconds = {
      1, 5, 10, 30, 60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 24 * 3600};
  static constexpr size_t kBuckets = kBoundsSeconds.size() + 1;

  // A negative wait (a clock step backwards) counts as zero.
  void Add(core::Duration wait);
  void Merge(const WaitHistogram& other);

  int64_t count() const { return count_; }
  core::Duration sum() const { return core::Duration::Micros(sum_us_); }
  core::Duration max() const { return core::Duration::Micros(max_us_); }
  const std::array<int64_t, kBuckets>& buckets() const { return buckets_; }

  bool operator==(const WaitHistogram&) const = default;

 private:
  int64_t count_ = 0;
  int64_t sum_us_ = 0;
  int64_t max_us_ = 0;
  std::array<int64_t, kBuckets> buckets_{};
};

// The cluster at one moment, and the starts since the previous sample.
struct HistorySample {
  core::Time time;
  int64_t pending = 0;     // jobs waiting to be scheduled
  int64_t held = 0;        // held by their user or by dependencies
  int64_t running = 0;     // starting, running or completing: holding GPUs
  int64_t gpus_total = 0;  // on nodes that are up or draining
  int64_t gpus_allocated = 0;
  int64_t nodes_up = 0;
  int64_t nodes_down = 0;
  WaitHistogram waits;  // jobs that first started since the previous sample

  bool operator==(const HistorySample&) const = default;
};

// A ring of the last `capacity` samples, oldest first. Thread-safe: the
// scheduler loop records while API threads read.
class History {
 public:
  // 24 hours at one sample every 5 seconds.
  static constexpr size_t kDefaultCapacity = 17'280;

  // REQUIRES: capacity > 0.
  explicit History(size_t capacity = kDefaultCapacity);

  // Appends `sample`, dropping the oldest when full. Samples are kept in
  // the order recorded; REQUIRES: times do not go backwards (a sample older
  // than the newest is dropped, so Since() may rely on the order).
  void Record(HistorySample sample);

  // The samples taken at or after `since`, oldest first.
  std::vector<HistorySample> Since(core::Time since) const;

  size_t size() const;
  size_t capacity() const { return capacity_; }

 private:
  // The i-th oldest sample. REQUIRES: mutex_ held, i < size_.
  const HistorySample& AtLocked(size_t i) const;

  const size_t capacity_;
  mutable std::mutex mutex_;
  std::vector<HistorySample> ring_;  // grows to capacity_, then wraps
  size_t oldest_ = 0;                // index of the oldest sample once full
};

}  // namespace berth::server
