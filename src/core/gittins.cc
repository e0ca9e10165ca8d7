#include "core/gittins.h"

#include <algorithm>
#include <cmath>

namespace berth::core {

std::optional<Duration> GittinsRank(std::span<const int64_t> sorted_sizes, Duration attained) {
  const int64_t a = attained.micros();
  const auto first = std::upper_bound(sorted_sizes.begin(), sorted_sizes.end(), a);
  const auto m = static_cast<double>(sorted_sizes.end() - first);
  if (m == 0) return std::nullopt;
  // Over the samples above a (remaining sizes r_1 <= ... <= r_m), Delta = r_j:
  // cost = (r_1 + ... + r_j + (m - j) r_j) / m, probability = j / m.
  double best = INFINITY;
  double done = 0;  // r_1 + ... + r_j
  double j = 0;
  for (auto it = first; it != sorted_sizes.end(); ++it) {
    const auto r = static_cast<double>(*it - a);
    done += r;
    j += 1;
    best = std::min(best, (done + (m - j) * r) / j);
  }
  return Duration::Micros(std::llround(best));
}

}  // namespace berth::core
