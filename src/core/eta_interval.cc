#include "core/eta_interval.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"

namespace berth::core {
namespace {

Duration Scaled(Duration scale, double factor) {
  return Duration::Micros(std::llround(static_cast<double>(scale.micros()) * factor));
}

}  // namespace

EtaCalibrator::EtaCalibrator(EtaCalibratorConfig config)
    : config_(config), miscoverage_(1.0 - config.coverage) {
  BERTH_CHECK(config_.window >= 1 && config_.min_samples >= 1 && config_.coverage > 0 &&
              config_.coverage < 1 && config_.min_scale > Duration::Zero() &&
              config_.adapt_step >= 0);
}

Duration EtaCalibrator::Scale(Time given_at, Time eta) const {
  return Max(eta - given_at, config_.min_scale);
}

void EtaCalibrator::Observe(Time given_at, Time eta, Time started,
                            std::optional<EtaInterval> given) {
  BERTH_CHECK(eta >= given_at);
  // Gibbs and Candes (2021): miscoverage += step x (target - missed).
  if (given && errors_.size() >= static_cast<size_t>(config_.min_samples)) {
    const double missed = given->Contains(started) ? 0.0 : 1.0;
    miscoverage_ = std::clamp(
        miscoverage_ + config_.adapt_step * ((1.0 - config_.coverage) - missed), 0.0, 1.0);
  }
  const double error = static_cast<double>((started - eta).micros()) /
                       static_cast<double>(Scale(given_at, eta).micros());
  if (errors_.size() < static_cast<size_t>(config_.window)) {
    errors_.push_back(error);
  } else {
    sorted_.erase(std::lower_bound(sorted_.begin(), sorted_.end(), errors_[next_]));
    errors_[next_] = error;
    next_ = (next_ + 1) % errors_.size();
  }
  sorted_.insert(std::upper_bound(sorted_.begin(), sorted_.end(), error), error);
  factor_.reset();
  ++observations_;
}

EtaInterval EtaCalibrator::Interval(Time given_at, Time eta) const {
  BERTH_CHECK(eta >= given_at);
  const Duration scale = Scale(given_at, eta);
  if (errors_.size() < static_cast<size_t>(config_.min_samples)) {
    return EtaInterval{given_at, eta + (eta - given_at)};
  }
  const double tail = miscoverage_ / 2.0;
  const Time low = Max(given_at, eta + Scaled(scale, Quantile(tail)));
  const Time high = Max(low, eta + Scaled(scale, Quantile(1.0 - tail)));
  return EtaInterval{low, high};
}

double EtaCalibrator::Quantile(double q) const {
  // The epsilon keeps 0.9 x 100 at rank 90, not 91, whatever the rounding.
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted_.size()) - 1e-9));
  return sorted_[std::clamp<size_t>(rank, 1, sorted_.size()) - 1];
}

double EtaCalibrator::LikeliestFactor() const {
  if (factor_) return *factor_;
  // A start with error e came at r = 1 + e times its plan's wait; the point
  // k x wait is right for the starts with r in [0.75 k, 1.25 k]. The
  // fullest such window over the sorted ratios (two pointers; the earliest
  // on ties) holds the starts from sorted_[first] to sorted_[last]; any k in
  // [r_last / 1.25, r_first / 0.75] keeps them all, and the one nearest
  // their median sits in the middle of the cluster.
  constexpr double kLow = 0.75;
  constexpr double kHigh = 1.25;
  auto ratio = [this](size_t i) { return std::max(0.0, 1.0 + sorted_[i]); };
  size_t first = 0;
  size_t count = 0;
  size_t end = 0;
  for (size_t i = 0; i < sorted_.size(); ++i) {
    end = std::max(end, i);
    while (end < sorted_.size() && ratio(end) <= ratio(i) * kHigh / kLow) ++end;
    if (end - i > count) {
      first = i;
      count = end - i;
    }
  }
  const double median = ratio(first + (count - 1) / 2);
  factor_ = std::clamp(median, ratio(first + count - 1) / kHigh, ratio(first) / kLow);
  return *factor_;
}

Time EtaCalibrator::Expected(Time given_at, Time eta) const {
  BERTH_CHECK(eta >= given_at);
  if (errors_.size() < static_cast<size_t>(config_.min_samples)) return eta;
  return Max(given_at, eta + Scaled(Scale(given_at, eta), LikeliestFactor() - 1.0));
}

EtaEstimate EstimateEta(const EtaCalibrator& calibrator, Time given_at, Time eta,
                        std::optional<Time> latest) {
  BERTH_CHECK(!latest || *latest >= given_at);
  const EtaInterval interval = calibrator.Interval(given_at, eta);
  // The likeliest point lies inside the interval but for rounding; a point
  // shown outside its own interval would read as a contradiction.
  EtaEstimate estimate{std::clamp(calibrator.Expected(given_at, eta), interval.low, interval.high),
                       interval};
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
