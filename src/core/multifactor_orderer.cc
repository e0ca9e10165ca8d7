#include "core/multifactor_orderer.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/check.h"

namespace berth::core {
void MultifactorOrderer::Keys(std::span<const Job* const> jobs, const OrderContext& context,
                              std::vector<OrderKey>& keys) const {
  BERTH_CHECK(context.fair_share != nullptr);
  keys.clear();
  keys.reserve(jobs.size());
  for (const Job* job : jobs) {
    const double factor = std::exp2(-context.fair_share->QueueExponent(job->spec.queue));
    const double age = std::clamp(
        (context.now - job->spec.submit_time).seconds() / weights_.max_age.seconds(), 0.0, 1.0);
    const double score = weights_.age * age + weights_.fair_share * factor;
    // Scaled to integer once: ordering must not depend on float comparisons.
    const auto scaled = static_cast<int64_t>(std::llround(score * 1e6));
    keys.push_back({-int64_t{job->spec.priority}, -scaled, job->spec.submit_time.micros()});
  }
}

}  // namespace berth::core
