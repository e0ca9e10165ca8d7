// Prometheus metrics: counters and histograms with labels, rendered in the
// text exposition format (version 0.0.4). Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace berth::server {

using Labels = std::vector<std::pair<std::string, std::string>>;

class Metrics {
 public:
  // Declares a metric once; observations of undeclared names are bugs.
  void DeclareCounter(std::string name, std::string help);
  void DeclareHistogram(std::string name, std::string help, std::vector<double> buckets);
  void DeclareGauge(std::string name, std::string help);

  void Increment(const std::string& name, const Labels& labels, double by = 1);
  void Observe(const std::string& name, const Labels& labels, double value);
  // Gauges are set whole at scrape time: every series of the gauge at once.
  void SetGauge(const std::string& name, std::map<Labels, double> series);

  std::string Render() const;

 private:
  enum class Kind { kCounter, kHistogram, kGauge };
  struct Histogram {
    std::vector<double> counts;  // per bucket, cumulative at render time
    double sum = 0;
    double count = 0;
  };
  struct Family {
    Kind kind;
    std::string help;
    std::vector<double> buckets;
    std::map<Labels, double> values;  // counters and gauges
    std::map<Labels, Histogram> histograms;
  };

  mutable std::mutex mutex_;
  std::map<std::string, Family> families_;
};

}  // namespace berth::server
