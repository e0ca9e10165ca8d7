#include "prom_histogram.h"

#include <cmath>
#include <limits>
#include <sstream>

namespace berth::bench {

PromHistogram PromHistogram::Since(const PromHistogram& earlier) const {
  PromHistogram out = *this;
  if (earlier.cumulative.size() != cumulative.size()) return out;
  for (size_t i = 0; i < cumulative.size(); ++i) out.cumulative[i] -= earlier.cumulative[i];
  out.sum -= earlier.sum;
  out.count -= earlier.count;
  return out;
}

std::optional<double> PromHistogram::Quantile(double q) const {
  if (cumulative.empty() || cumulative.back() <= 0) return std::nullopt;
  const double rank = q * cumulative.back();
  for (size_t i = 0; i < cumulative.size(); ++i) {
    if (cumulative[i] < rank) continue;
    // The highest finite bound is the answer when the rank is in +Inf.
    if (std::isinf(bounds[i])) return i > 0 ? bounds[i - 1] : 0;
    const double lower = i > 0 ? bounds[i - 1] : 0;
    const double below = i > 0 ? cumulative[i - 1] : 0;
    const double in_bucket = cumulative[i] - below;
    if (in_bucket <= 0) return bounds[i];
    return lower + (bounds[i] - lower) * (rank - below) / in_bucket;
  }
  return bounds.back();
}

std::optional<double> PromHistogram::Mean() const {
  if (count <= 0) return std::nullopt;
  return sum / count;
}

PromHistogram ParsePromHistogram(const std::string& text, const std::string& name,
                                 const std::string& labels) {
  PromHistogram out;
  std::istringstream lines(text);
  std::string line;
  const std::string bucket = name + "_bucket{" + (labels.empty() ? "" : labels + ",") + "le=\"";
  const std::string series = labels.empty() ? "" : "{" + labels + "}";
  const std::string sum = name + "_sum" + series + " ";
  const std::string count = name + "_count" + series + " ";
  while (std::getline(lines, line)) {
    if (line.rfind(bucket, 0) == 0) {
      const size_t close = line.find('"', bucket.size());
      if (close == std::string::npos) continue;
      const std::string le = line.substr(bucket.size(), close - bucket.size());
      out.bounds.push_back(le == "+Inf" ? std::numeric_limits<double>::infinity() : std::stod(le));
      out.cumulative.push_back(std::stod(line.substr(line.rfind(' ') + 1)));
    } else if (line.rfind(sum, 0) == 0) {
      out.sum = std::stod(line.substr(sum.size()));
    } else if (line.rfind(count, 0) == 0) {
      out.count = std::stod(line.substr(count.size()));
    }
  }
  return out;
}

}  // namespace berth::bench
