#include "core/gittins.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"

namespace berth::core {

std::optional<Duration> GittinsRank(std::span<const int64_t> sorted_sizes,
                                    std::span<const double> weights, Duration attained) {
  BERTH_CHECK(weights.size() == sorted_sizes.size());
  const int64_t a = attained.micros();
  const auto above = static_cast<size_t>(
      std::upper_bound(sorted_sizes.begin(), sorted_sizes.end(), a) - sorted_sizes.begin());
  if (above == sorted_sizes.size()) return std::nullopt;
  double mass = 0;  // m: the weight of the sizes above a
  for (size_t i = above; i < sorted_sizes.size(); ++i) mass += weights[i];
  if (mass == 0) return std::nullopt;  // only sizes too old to weigh anything
  // Over the sizes above a (remaining sizes r_1 <= ... <= r_m, weights
  // w_1..w_m), Delta = r_j: cost = (w_1 r_1 + ... + w_j r_j + (m - W_j) r_j) / m,
  // probability = W_j / m, with W_j = w_1 + ... + w_j.
  double best = INFINITY;
  double done = 0;    // w_1 r_1 + ... + w_j r_j
  double served = 0;  // W_j
  for (size_t i = above; i < sorted_sizes.size(); ++i) {
    const auto r = static_cast<double>(sorted_sizes[i] - a);
    done += weights[i] * r;
    served += weights[i];
    if (served > 0) best = std::min(best, (done + (mass - served) * r) / served);
  }
  return Duration::Micros(std::llround(best));
}

std::optional<Duration> MeanRemainingSize(std::span<const int64_t> sorted_sizes,
                                          std::span<const double> weights, Duration attained) {
  BERTH_CHECK(weights.size() == sorted_sizes.size());
  const int64_t a = attained.micros();
  double sum = 0;
  double mass = 0;
  for (size_t i = static_cast<size_t>(
           std::upper_bound(sorted_sizes.begin(), sorted_sizes.end(), a) - sorted_sizes.begin());
       i < sorted_sizes.size(); ++i) {
    sum += weights[i] * static_cast<double>(sorted_sizes[i] - a);
    mass += weights[i];
  }
  if (mass == 0) return std::nullopt;
  return Duration::Micros(std::llround(sum / mass));
}

}  // namespace berth::core
