#include "core/eta_interval.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"

namespace berth::core {
namespace {

// Nearest-rank quantile of `values` (copied: nth_element reorders).
double Quantile(std::vector<double> values, double q) {
  // The epsilon keeps 0.9 x 100 at rank 90, not 91, whatever the rounding.
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size()) - 1e-9));
  const size_t index = std::clamp<size_t>(rank, 1, values.size()) - 1;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(index),
                   values.end());
  return values[index];
}

Duration Scaled(Duration scale, double factor) {
  return Duration::Micros(std::llround(static_cast<double>(scale.micros()) * factor));
}

}  // namespace

EtaCalibrator::EtaCalibrator(EtaCalibratorConfig config) : config_(config) {
  BERTH_CHECK(config_.window >= 1 && config_.min_samples >= 1 && config_.coverage > 0 &&
              config_.coverage < 1 && config_.min_scale > Duration::Zero());
}

Duration EtaCalibrator::Scale(Time given_at, Time eta) const {
  return Max(eta - given_at, config_.min_scale);
}

void EtaCalibrator::Observe(Time given_at, Time eta, Time started) {
  BERTH_CHECK(eta >= given_at);
  const double error = static_cast<double>((started - eta).micros()) /
                       static_cast<double>(Scale(given_at, eta).micros());
  if (errors_.size() < static_cast<size_t>(config_.window)) {
    errors_.push_back(error);
  } else {
    errors_[next_] = error;
    next_ = (next_ + 1) % errors_.size();
  }
  ++observations_;
}

EtaInterval EtaCalibrator::Interval(Time given_at, Time eta) const {
  BERTH_CHECK(eta >= given_at);
  const Duration scale = Scale(given_at, eta);
  if (errors_.size() < static_cast<size_t>(config_.min_samples)) {
    return EtaInterval{given_at, eta + (eta - given_at)};
  }
  const double tail = (1.0 - config_.coverage) / 2.0;
  const Time low = Max(given_at, eta + Scaled(scale, Quantile(errors_, tail)));
  const Time high = Max(low, eta + Scaled(scale, Quantile(errors_, 1.0 - tail)));
  return EtaInterval{low, high};
}

EtaEstimate EstimateEta(const EtaCalibrator& calibrator, Time given_at, Time eta,
                        std::optional<Time> latest) {
  BERTH_CHECK(!latest || *latest >= given_at);
  EtaEstimate estimate{eta, calibrator.Interval(given_at, eta)};
  if (latest) {
    estimate.expected = Min(estimate.expected, *latest);
    estimate.interval.high = Min(estimate.interval.high, *latest);
    estimate.interval.low = Min(estimate.interval.low, estimate.interval.high);
  }
  return estimate;
}

EtaEstimate AsOf(const EtaEstimate& estimate, Time now) {
  return EtaEstimate{Max(estimate.expected, now), EtaInterval{Max(estimate.interval.low, now),
                                                              Max(estimate.interval.high, now)}};
}

}  // namespace berth::core
