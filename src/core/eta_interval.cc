#include "core/eta_interval.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"

namespace berth::core {
namespace {

Duration Scaled(Duration scale, double factor) {
  return Duration::Micros(std::llround(static_cast<double>(scale.micros()) * factor));
}

constexpr double kToleranceShare = 0.25;
constexpr Duration kToleranceFloor = Duration::Minutes(10);

// The point's factor is one per band of promised waits this wide, in the
// natural log of seconds (a factor of 1.28); promises under a minute share
// the first.
constexpr double kPromiseBand = 0.25;
double LogPromise(Duration promised_wait) {
  return std::log(std::max(promised_wait.seconds(), 60.0));
}

}  // namespace

Duration EtaTolerance(Duration promised_wait) {
  return Max(Scaled(promised_wait, kToleranceShare), kToleranceFloor);
}

bool EtaKept(Time given_at, Time eta, Time started) {
  BERTH_CHECK(eta >= given_at);
  return Max(started - eta, eta - started) <= EtaTolerance(eta - given_at);
}

PromisedWaits PromisesKeptBy(Duration waited) {
  // A promise E keeps `waited` (a) when |a - E| <= max(q E, floor). Below
  // floor / q the floor binds: E in [a - floor, a + floor]; above it the
  // share does: E in [a / (1 + q), a / (1 - q)]. The two pieces meet, so
  // their union is one interval; which piece gives each end depends on a.
  constexpr double q = kToleranceShare;
  const double a = static_cast<double>(waited.micros());
  const double floor = static_cast<double>(kToleranceFloor.micros());
  const double low = a <= floor * (1 + q) / q ? std::max(0.0, a - floor) : a / (1 + q);
  const double high = a >= floor * (1 - q) / q ? a / (1 - q) : a + floor;
  return PromisedWaits{Duration::Micros(std::llround(low)), Duration::Micros(std::llround(high))};
}

EtaCalibrator::EtaCalibrator(EtaCalibratorConfig config)
    : config_(config), miscoverage_(1.0 - config.coverage) {
  BERTH_CHECK(config_.window >= 1 && config_.min_samples >= 1 && config_.coverage > 0 &&
              config_.coverage < 1 && config_.min_scale > Duration::Zero() &&
              config_.adapt_step >= 0);
}

Duration EtaCalibrator::Scale(Duration promised_wait) const {
  return Max(promised_wait, config_.min_scale);
}

double EtaCalibrator::RelativeError(const Judged& judged) const {
  return static_cast<double>((judged.waited - judged.promised).micros()) /
         static_cast<double>(Scale(judged.promised).micros());
}

void EtaCalibrator::Observe(Time given_at, Time eta, Time started,
                            std::optional<EtaInterval> given) {
  BERTH_CHECK(eta >= given_at);
  // Gibbs and Candes (2021): miscoverage += step x (target - missed).
  if (given && judged_.size() >= static_cast<size_t>(config_.min_samples)) {
    const double missed = given->Contains(started) ? 0.0 : 1.0;
    miscoverage_ = std::clamp(
        miscoverage_ + config_.adapt_step * ((1.0 - config_.coverage) - missed), 0.0, 1.0);
  }
  const Judged judged{eta - given_at, started - given_at};
  const double error = RelativeError(judged);
  if (judged_.size() < static_cast<size_t>(config_.window)) {
    judged_.push_back(judged);
  } else {
    sorted_.erase(std::lower_bound(sorted_.begin(), sorted_.end(), RelativeError(judged_[next_])));
    judged_[next_] = judged;
    next_ = (next_ + 1) % judged_.size();
  }
  sorted_.insert(std::upper_bound(sorted_.begin(), sorted_.end(), error), error);
  factors_.clear();
  ++observations_;
}

EtaInterval EtaCalibrator::Interval(Time given_at, Time eta) const {
  BERTH_CHECK(eta >= given_at);
  const Duration scale = Scale(eta - given_at);
  if (judged_.size() < static_cast<size_t>(config_.min_samples)) {
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

double EtaCalibrator::LikeliestFactor(Duration promised_wait) const {
  // One factor per band of promises (kPromiseBand in log seconds), each
  // from the whole window weighed by how near its promises are.
  const double center = LogPromise(promised_wait);
  const auto band = static_cast<int64_t>(std::floor(center / kPromiseBand));
  if (const auto cached = factors_.find(band); cached != factors_.end()) return cached->second;
  const double band_center = (static_cast<double>(band) + 0.5) * kPromiseBand;
  // Expected tells promised + scale x (k - 1), at least 0. For each judged
  // ETA the factors that would have made it right form one interval (the
  // promises PromisesKeptBy its wait, mapped back to k, which is linear in
  // the promise); the k most often right is where the most weight of those
  // intervals overlaps: a sweep over their ends, the earliest on ties.
  // Within that overlap the point nearest the weighted median of its
  // starts' exact factors (the k that would have told each start to the
  // second) is most central.
  struct Factors {
    double low;
    double high;
    double exact;
    double weight;
  };
  std::vector<Factors> factors;
  factors.reserve(judged_.size());
  double near = 0;  // the weight of them all
  for (const Judged& judged : judged_) {
    const double promised = static_cast<double>(judged.promised.micros());
    const double scale = static_cast<double>(Scale(judged.promised).micros());
    auto factor = [&](Duration wait) {
      return std::max(0.0, (static_cast<double>(wait.micros()) - promised) / scale + 1.0);
    };
    double weight = 1.0;
    if (config_.point_bandwidth > 0) {
      const double distance = (LogPromise(judged.promised) - band_center) / config_.point_bandwidth;
      weight = std::exp(-0.5 * distance * distance);
    }
    near += weight;
    const PromisedWaits kept = PromisesKeptBy(judged.waited);
    factors.push_back(Factors{factor(kept.low), factor(kept.high), factor(judged.waited), weight});
  }
  // Fewer than min_samples judged ETAs' worth near this promise is too
  // little to tell its own factor: the whole window's, evenly.
  if (near < config_.min_samples) {
    for (Factors& f : factors) f.weight = 1.0;
  }
  std::vector<std::pair<double, double>> ends;  // (k, +weight opens / -weight closes)
  ends.reserve(2 * factors.size());
  for (const Factors& f : factors) {
    ends.emplace_back(f.low, f.weight);
    ends.emplace_back(f.high, -f.weight);
  }
  // At one k, opens before closes: the intervals are closed.
  std::sort(ends.begin(), ends.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second > b.second;
  });
  // Sums of weights carry rounding: a later overlap must weigh more by more
  // than that to count as heavier.
  constexpr double kHeavier = 1e-9;
  double open = 0;
  double most = 0;
  double low = 1.0;
  double high = 1.0;
  for (size_t i = 0; i < ends.size(); ++i) {
    open += ends[i].second;
    if (open > most + kHeavier) {
      most = open;
      low = ends[i].first;
      high = ends[i + 1].first;  // an open is always followed by its close
    }
  }
  std::vector<std::pair<double, double>> exact;  // (exact factor, weight)
  double total = 0;
  for (const Factors& f : factors) {
    if (f.low <= low && high <= f.high) {
      exact.emplace_back(f.exact, f.weight);
      total += f.weight;
    }
  }
  std::sort(exact.begin(), exact.end());
  // The first whose weight and that of those below reach half the total.
  double below = 0;
  double median = exact.back().first;
  for (const auto& [value, weight] : exact) {
    below += weight;
    if (below >= total / 2 - kHeavier) {
      median = value;
      break;
    }
  }
  return factors_[band] = std::clamp(median, low, high);
}

Time EtaCalibrator::Expected(Time given_at, Time eta) const {
  BERTH_CHECK(eta >= given_at);
  if (judged_.size() < static_cast<size_t>(config_.min_samples)) return eta;
  return Max(given_at, eta + Scaled(Scale(eta - given_at), LikeliestFactor(eta - given_at) - 1.0));
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
