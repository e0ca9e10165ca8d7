#include "core/array_throttle.h"

namespace berth::core {

bool ArrayThrottle::Allows(const JobSpec& job) const {
  if (!job.array_limit) return true;
  const JobId array = job.array_limit->array;
  int32_t running = 0;
  if (auto it = running_.find(array); it != running_.end()) running += it->second;
  if (auto it = decided_.find(array); it != decided_.end()) running += it->second;
  return running < job.array_limit->max_running;
}

void ArrayThrottle::Add(const JobSpec& job) {
  if (job.array_limit) ++decided_[job.array_limit->array];
}

void ArrayThrottle::Remove(const JobSpec& job) {
  if (job.array_limit) --decided_[job.array_limit->array];
}

}  // namespace berth::core
