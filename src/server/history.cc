#include "server/history.h"

#include <algorithm>
#include <utility>

#include "common/check.h"

namespace berth::server {

void WaitHistogram::Add(core::Duration wait) {
  const int64_t us = std::max<int64_t>(wait.micros(), 0);
  size_t bucket = 0;
  while (bucket < kBoundsSeconds.size() && us > kBoundsSeconds[bucket] * 1'000'000) ++bucket;
  ++buckets_[bucket];
  ++count_;
  sum_us_ += us;
  max_us_ = std::max(max_us_, us);
}

void WaitHistogram::Merge(const WaitHistogram& other) {
  for (size_t i = 0; i < kBuckets; ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_us_ += other.sum_us_;
  max_us_ = std::max(max_us_, other.max_us_);
}

History::History(size_t capacity) : capacity_(capacity) {
  BERTH_CHECK(capacity > 0) << "history capacity must be positive";
}

void History::Record(HistorySample sample) {
  std::lock_guard lock(mutex_);
  // The ring stays sorted by time so Since() can search it; a clock that
  // stepped backwards costs one sample, not the order.
  if (!ring_.empty() && sample.time < AtLocked(ring_.size() - 1).time) return;
  if (ring_.size() < capacity_) {
    ring_.push_back(std::move(sample));
    return;
  }
  ring_[oldest_] = std::move(sample);
  oldest_ = (oldest_ + 1) % capacity_;
}

const HistorySample& History::AtLocked(size_t i) const {
  return ring_[(oldest_ + i) % ring_.size()];
}

std::vector<HistorySample> History::Since(core::Time since) const {
  std::lock_guard lock(mutex_);
  // Binary search over the logical (oldest-first) order.
  size_t low = 0;
  size_t high = ring_.size();
  while (low < high) {
    const size_t mid = low + (high - low) / 2;
    if (AtLocked(mid).time < since) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  std::vector<HistorySample> out;
  out.reserve(ring_.size() - low);
  for (size_t i = low; i < ring_.size(); ++i) out.push_back(AtLocked(i));
  return out;
}

size_t History::size() const {
  std::lock_guard lock(mutex_);
  return ring_.size();
}

}  // namespace berth::server
