#include "server/metrics.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/check.h"

namespace berth::server {
namespace {

std::string Escape(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string LabelText(const Labels& labels, const std::string& extra_key = "",
                      const std::string& extra_value = "") {
  std::string out;
  auto add = [&](const std::string& key, const std::string& value) {
    out += out.empty() ? "{" : ",";
    out += key + "=\"" + Escape(value) + "\"";
  };
  for (const auto& [key, value] : labels) add(key, value);
  if (!extra_key.empty()) add(extra_key, extra_value);
  if (!out.empty()) out += "}";
  return out;
}

std::string Number(double value) {
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  std::ostringstream out;
  out.precision(17);
  out << value;
  return out.str();
}

}  // namespace

void Metrics::DeclareCounter(std::string name, std::string help) {
  std::lock_guard lock(mutex_);
  families_[std::move(name)] = Family{Kind::kCounter, std::move(help), {}, {}, {}};
}

void Metrics::DeclareGauge(std::string name, std::string help) {
  std::lock_guard lock(mutex_);
  families_[std::move(name)] = Family{Kind::kGauge, std::move(help), {}, {}, {}};
}

void Metrics::DeclareHistogram(std::string name, std::string help, std::vector<double> buckets) {
  std::sort(buckets.begin(), buckets.end());
  std::lock_guard lock(mutex_);
  families_[std::move(name)] =
      Family{Kind::kHistogram, std::move(help), std::move(buckets), {}, {}};
}

void Metrics::Increment(const std::string& name, const Labels& labels, double by) {
  std::lock_guard lock(mutex_);
  auto it = families_.find(name);
  BERTH_CHECK(it != families_.end() && it->second.kind == Kind::kCounter) << name;
  it->second.values[labels] += by;
}

void Metrics::Observe(const std::string& name, const Labels& labels, double value) {
  std::lock_guard lock(mutex_);
  auto it = families_.find(name);
  BERTH_CHECK(it != families_.end() && it->second.kind == Kind::kHistogram) << name;
  Family& family = it->second;
  Histogram& histogram = family.histograms[labels];
  histogram.counts.resize(family.buckets.size(), 0);
  for (size_t i = 0; i < family.buckets.size(); ++i) {
    if (value <= family.buckets[i]) {
      ++histogram.counts[i];
      break;
    }
  }
  histogram.sum += value;
  ++histogram.count;
}

void Metrics::SetGauge(const std::string& name, std::map<Labels, double> series) {
  std::lock_guard lock(mutex_);
  auto it = families_.find(name);
  BERTH_CHECK(it != families_.end() && it->second.kind == Kind::kGauge) << name;
  it->second.values = std::move(series);
}

std::string Metrics::Render() const {
  std::lock_guard lock(mutex_);
  std::string out;
  for (const auto& [name, family] : families_) {
    const char* type = family.kind == Kind::kCounter     ? "counter"
                       : family.kind == Kind::kHistogram ? "histogram"
                                                         : "gauge";
    out += "# HELP " + name + " " + family.help + "\n# TYPE " + name + " " + type + "\n";
    for (const auto& [labels, value] : family.values) {
      out += name + LabelText(labels) + " " + Number(value) + "\n";
    }
    for (const auto& [labels, histogram] : family.histograms) {
      double cumulative = 0;
      for (size_t i = 0; i < family.buckets.size(); ++i) {
        cumulative += i < histogram.counts.size() ? histogram.counts[i] : 0;
        out += name + "_bucket" + LabelText(labels, "le", Number(family.buckets[i])) + " " +
               Number(cumulative) + "\n";
      }
      out +=
          name + "_bucket" + LabelText(labels, "le", "+Inf") + " " + Number(histogram.count) + "\n";
      out += name + "_sum" + LabelText(labels) + " " + Number(histogram.sum) + "\n";
      out += name + "_count" + LabelText(labels) + " " + Number(histogram.count) + "\n";
    }
  }
  return out;
}

}  // namespace berth::server
