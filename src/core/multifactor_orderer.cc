#include "core/multifactor_orderer.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

namespace berth::core {
namespace {

// Fair-share factor per queue at `now`.
std::map<std::string, double, std::less<>> FairShareFactors(const OrderContext& context,
                                                            std::span<const Job* const> jobs) {
  const ClusterState& state = context.state;
  std::map<std::string, double, std::less<>> usage;
  for (const auto& [queue, value] : state.usage().queues()) {
    usage[queue] = state.usage().QueueUsage(queue, context.now);
  }
  for (const auto& [id, job] : state.running()) {
    usage[job->spec.queue] +=
        state.usage().RunningContribution(job->spec.total_gpu(), job->started, context.now);
  }
  for (const Job* job : jobs) usage.try_emplace(job->spec.queue, 0.0);

  double total = 0;
  for (const auto& [queue, value] : usage) total += value;
  const double share = 1.0 / static_cast<double>(std::max<size_t>(1, usage.size()));
  std::map<std::string, double, std::less<>> factors;
  for (const auto& [queue, value] : usage) {
    const double normalized = total > 0 ? value / total : 0.0;
    factors[queue] = std::exp2(-normalized / share);
  }
  return factors;
}

}  // namespace

void MultifactorOrderer::Keys(std::span<const Job* const> jobs, const OrderContext& context,
                              std::vector<OrderKey>& keys) const {
  const auto by_name = FairShareFactors(context, jobs);
  // Hashed for the per-job lookups; only looked up, never iterated, so the
  // hash order cannot leak into decisions.
  const std::unordered_map<std::string_view, double> factors(by_name.begin(), by_name.end());
  keys.clear();
  keys.reserve(jobs.size());
  for (const Job* job : jobs) {
    const double factor = factors.find(job->spec.queue)->second;
    const double age = std::clamp(
        (context.now - job->spec.submit_time).seconds() / weights_.max_age.seconds(), 0.0, 1.0);
    const double score = weights_.age * age + weights_.fair_share * factor;
    // Scaled to integer once: ordering must not depend on float comparisons.
    const auto scaled = static_cast<int64_t>(std::llround(score * 1e6));
    keys.push_back({-int64_t{job->spec.priority}, -scaled, job->spec.submit_time.micros()});
  }
}

}  // namespace berth::core
