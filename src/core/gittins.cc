#include "core/gittins.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"

namespace berth::core {
namespace {

// The sizes above `attained`: where they begin in the sorted sample and
// their total weight.
struct Above {
  size_t first;
  double mass;
};
Above SizesAbove(std::span<const int64_t> sorted_sizes, std::span<const double> weights,
                 Duration attained) {
  BERTH_CHECK(weights.size() == sorted_sizes.size());
  const auto first = static_cast<size_t>(
      std::upper_bound(sorted_sizes.begin(), sorted_sizes.end(), attained.micros()) -
      sorted_sizes.begin());
  double mass = 0;
  for (size_t i = first; i < sorted_sizes.size(); ++i) mass += weights[i];
  return Above{first, mass};
}

}  // namespace

std::optional<Duration> GittinsRank(std::span<const int64_t> sorted_sizes,
                                    std::span<const double> weights, Duration attained) {
  const int64_t a = attained.micros();
  const auto [above, mass] = SizesAbove(sorted_sizes, weights, attained);  // mass: m
  // None, or only sizes too old to weigh anything.
  if (mass == 0) return std::nullopt;
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

std::vector<Duration> RemainingSizeQuantiles(std::span<const int64_t> sorted_sizes,
                                             std::span<const double> weights, Duration attained,
                                             int32_t count) {
  BERTH_CHECK(count >= 1);
  const int64_t a = attained.micros();
  const auto [above, mass] = SizesAbove(sorted_sizes, weights, attained);
  if (mass == 0) return {};
  std::vector<Duration> quantiles;
  quantiles.reserve(static_cast<size_t>(count));
  double reached = 0;  // the weight of the sizes up to sorted_sizes[i]
  size_t i = above;
  for (int32_t k = 0; k < count; ++k) {
    const double level = (k + 0.5) / count * mass;
    // The last size with weight stands for the top, whatever rounding left.
    while (i + 1 < sorted_sizes.size() && reached + weights[i] < level) reached += weights[i++];
    quantiles.push_back(Duration::Micros(sorted_sizes[i] - a));
  }
  return quantiles;
}

}  // namespace berth::core
