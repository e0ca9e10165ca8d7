// Reading a histogram out of Prometheus text exposition: its cumulative
// buckets, the difference between two scrapes, and quantiles interpolated
// within a bucket as PromQL's histogram_quantile does.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace berth::bench {

struct PromHistogram {
  std::vector<double> bounds;  // upper bounds, ascending; the last is +Inf
  std::vector<double> cumulative;
  double sum = 0;
  double count = 0;

  // Observations between an earlier scrape and this one.
  PromHistogram Since(const PromHistogram& earlier) const;
  // nullopt when empty.
  std::optional<double> Quantile(double q) const;
  std::optional<double> Mean() const;
};

// The series of histogram `name` in `text` whose labels, besides `le`, are
// exactly `labels` as exposed (for example `part="decide"`; "" for the
// unlabelled series); empty if absent.
PromHistogram ParsePromHistogram(const std::string& text, const std::string& name,
                                 const std::string& labels = "");

}  // namespace berth::bench
