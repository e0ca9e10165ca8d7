#include "core/orderers.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"

namespace berth::core {

void FifoOrderer::Keys(std::span<const Job* const> jobs, const OrderContext& context,
                       std::vector<OrderKey>& keys) const {
  (void)context;
  keys.clear();
  for (const Job* job : jobs) {
    keys.push_back({-int64_t{job->spec.priority}, job->spec.submit_time.micros(), 0});
  }
}

void ShortestFirstOrderer::Keys(std::span<const Job* const> jobs, const OrderContext& context,
                                std::vector<OrderKey>& keys) const {
  keys.clear();
  for (const Job* job : jobs) {
    const Duration time = measure_ == Measure::kTotal
                              ? context.runtimes.Expected(*job)
                              : context.runtimes.Remaining(*job, context.now);
    // GPU time in GPU-milliseconds: microseconds x milli-GPU / 10^6 keeps
    // int64 far from overflow (a year on 10,000 GPUs is ~3e14).
    const int64_t service =
        service_ == Service::kTime
            ? time.micros()
            : time.micros() / 1000 * std::max<int64_t>(job->spec.total_gpu().value(), 1) / 1000;
    keys.push_back({-int64_t{job->spec.priority}, service, job->spec.submit_time.micros()});
  }
}

LasOrderer::LasOrderer(std::vector<double> thresholds_gpu_seconds)
    : thresholds_(std::move(thresholds_gpu_seconds)) {
  BERTH_CHECK(std::is_sorted(thresholds_.begin(), thresholds_.end()));
}

int LasOrderer::QueueOf(double attained_gpu_seconds) const {
  return static_cast<int>(
      std::upper_bound(thresholds_.begin(), thresholds_.end(), attained_gpu_seconds) -
      thresholds_.begin());
}

void LasOrderer::Keys(std::span<const Job* const> jobs, const OrderContext& context,
                      std::vector<OrderKey>& keys) const {
  keys.clear();
  for (const Job* job : jobs) {
    keys.push_back({-int64_t{job->spec.priority}, QueueOf(job->AttainedGpuSeconds(context.now)),
                    job->spec.submit_time.micros()});
  }
}

std::optional<Time> LasOrderer::NextKeyChange(const OrderContext& context) const {
  std::optional<Time> next;
  for (const auto& [id, job] : context.state.running()) {
    const double gpus = job->spec.gpus();
    if (gpus <= 0) continue;
    const double attained = job->AttainedGpuSeconds(context.now);
    const int queue = QueueOf(attained);
    if (static_cast<size_t>(queue) >= thresholds_.size()) continue;
    // Round up to the next microsecond so the job is past the threshold then.
    const double seconds = (thresholds_[static_cast<size_t>(queue)] - attained) / gpus;
    const Time at =
        context.now + Duration::Micros(static_cast<int64_t>(std::ceil(seconds * 1e6)) + 1);
    KeepEarliest(next, at);
  }
  return next;
}

}  // namespace berth::core
