#include "core/runtime_estimator.h"

namespace berth::core {

Duration RuntimeEstimator::Remaining(const Job& job, Time now) const {
  return Max(Duration::Zero(), Expected(job) - job.RunTime(now));
}

Duration UserLimitEstimator::Expected(const Job& job) const {
  if (job.spec.estimate) return *job.spec.estimate;
  if (job.spec.time_limit) return *job.spec.time_limit;
  return default_limit_;
}

Duration TimeLimitEstimator::Expected(const Job& job) const {
  return job.spec.time_limit ? *job.spec.time_limit : default_limit_;
}

}  // namespace berth::core
