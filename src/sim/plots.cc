#include "sim/plots.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <string_view>
#include <system_error>
#include <utility>

#include "common/check.h"
#include "core/ids.h"

namespace berth::sim {
namespace {

// ---------------------------------------------------------------------------
// Text: file names, exact decimals, escaping.

std::string SafeFileFragment(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    const bool safe = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
    if (!safe) c = '_';
  }
  return out;
}

// "12", "12.5", "-0.000001": integer arithmetic, so every microsecond prints
// exactly; trailing zeros of the fraction are dropped.
std::string FormatMicrosAsSeconds(int64_t micros) {
  // Unsigned negation keeps INT64_MIN well defined.
  const uint64_t magnitude =
      micros < 0 ? 0 - static_cast<uint64_t>(micros) : static_cast<uint64_t>(micros);
  std::string out = micros < 0 ? "-" : "";
  out += std::to_string(magnitude / 1'000'000);
  const uint64_t fraction = magnitude % 1'000'000;
  if (fraction == 0) return out;
  std::string digits = std::to_string(fraction);
  digits.insert(0, 6 - digits.size(), '0');
  digits.erase(digits.find_last_not_of('0') + 1);
  return out + "." + digits;
}

// std::to_chars is locale-independent, which keeps the files byte-identical
// whatever locale the caller set.
std::string FormatFixed(double value, int decimals) {
  std::array<char, 64> buffer{};
  const auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value,
                                       std::chars_format::fixed, decimals);
  BERTH_CHECK(ec == std::errc()) << "cannot format " << value;
  return std::string(buffer.data(), end);
}

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// RFC 4180: quote a field that holds a separator, a quote or a line break.
std::string CsvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// ---------------------------------------------------------------------------
// jobs-<policy>.csv

constexpr std::string_view kCsvHeader =
    "id,trace_line,queue,gpus,submit_s,start_s,finish_s,duration_s,wait_s,jct_s,preemptions,"
    "predicted_s,eta_s,eta_low_s,eta_high_s\n";

core::Time EarliestSubmit(const SimResult& result) {
  core::Time earliest = core::Time::Infinite();
  for (const JobOutcome& job : result.jobs) earliest = core::Min(earliest, job.submit);
  return earliest;
}

std::string SecondsSince(core::Time t, core::Time origin) {
  if (t.is_infinite()) return "";
  return FormatMicrosAsSeconds((t - origin).micros());
}

std::string CsvRow(const JobOutcome& job, core::Time origin) {
  const std::string jct = job.finish.is_infinite() ? "" : FormatMicrosAsSeconds(job.jct().micros());
  std::string row = core::ToString(job.id);
  row += "," + std::to_string(job.trace_line);
  row += "," + CsvField(job.queue);
  row += "," + std::to_string(job.gpus);
  row += "," + SecondsSince(job.submit, origin);
  row += "," + SecondsSince(job.first_start, origin);
  row += "," + SecondsSince(job.finish, origin);
  row += "," + FormatMicrosAsSeconds(job.duration.micros());
  row += "," + FormatMicrosAsSeconds(job.wait.micros());
  row += "," + jct;
  row += "," + std::to_string(job.preemptions);
  row += "," + (job.predicted ? FormatMicrosAsSeconds(job.predicted->micros()) : std::string());
  const bool has_eta = job.first_eta && *job.first_eta;
  row += "," + (has_eta ? SecondsSince(**job.first_eta, origin) : std::string());
  const bool has_interval = has_eta && job.first_eta_interval;
  row += "," + (has_interval ? SecondsSince(job.first_eta_interval->low, origin) : std::string());
  row += "," + (has_interval ? SecondsSince(job.first_eta_interval->high, origin) : std::string());
  return row + "\n";
}

std::string JobsCsv(const SimResult& result) {
  const core::Time origin = EarliestSubmit(result);
  std::string csv(kCsvHeader);
  for (const JobOutcome& job : result.jobs) csv += CsvRow(job, origin);
  return csv;
}

// ---------------------------------------------------------------------------
// Step lines and downsampling.

// A step function over [lo, hi]: `initial` holds from lo until the first
// change, each change holds until the next. Changes are ascending in x.
struct StepSeries {
  double lo = 0;
  double hi = 1;
  double initial = 0;
  std::vector<PlotPoint> changes;
};

enum class BucketReduce { kMax, kTimeWeightedMean };

// Collects a line's points, dropping those that add nothing to the drawing: a
// repeat of the last point, or the middle one of three on a horizontal run.
class LineBuilder {
 public:
  void Add(double x, double y) {
    const PlotPoint p{x, y};
    if (!points_.empty() && points_.back() == p) return;
    const size_t n = points_.size();
    if (n >= 2 && points_[n - 1].y == y && points_[n - 2].y == y) {
      points_.back() = p;
      return;
    }
    points_.push_back(p);
  }
  std::vector<PlotPoint> Take() && { return std::move(points_); }

 private:
  std::vector<PlotPoint> points_;
};

// Every change drawn as a vertical jump: at most 2 * changes + 2 points.
std::vector<PlotPoint> ExactSteps(const StepSeries& series) {
  LineBuilder line;
  double current = series.initial;
  line.Add(series.lo, current);
  for (const PlotPoint& change : series.changes) {
    line.Add(change.x, current);
    current = change.y;
    line.Add(change.x, current);
  }
  line.Add(series.hi, current);
  return std::move(line).Take();
}

double BucketEdge(const StepSeries& series, size_t edge, size_t buckets) {
  return series.lo +
         (series.hi - series.lo) * static_cast<double>(edge) / static_cast<double>(buckets);
}

// Points on the last edge belong to the last bucket, so the final value of a
// series still shows.
size_t BucketOf(const StepSeries& series, double x, size_t buckets) {
  if (x <= series.lo) return 0;
  const double position = (x - series.lo) / (series.hi - series.lo) * static_cast<double>(buckets);
  if (position >= static_cast<double>(buckets)) return buckets - 1;
  return static_cast<size_t>(position);
}

// The largest value in effect anywhere in each bucket (the value carried in
// from the left counts, so a drop shows at most one bucket late).
std::vector<double> BucketMax(const StepSeries& series, size_t buckets) {
  std::vector<double> out;
  out.reserve(buckets);
  double current = series.initial;
  size_t k = 0;
  for (size_t i = 0; i < buckets; ++i) {
    double peak = current;
    for (; k < series.changes.size() && BucketOf(series, series.changes[k].x, buckets) <= i; ++k) {
      current = series.changes[k].y;
      peak = std::max(peak, current);
    }
    out.push_back(peak);
  }
  return out;
}

// The time-weighted mean of each bucket: sum of value x time held, over the
// bucket width, so the area under the line is kept.
std::vector<double> BucketMean(const StepSeries& series, size_t buckets) {
  std::vector<double> out;
  out.reserve(buckets);
  double current = series.initial;
  size_t k = 0;
  for (size_t i = 0; i < buckets; ++i) {
    const double begin = BucketEdge(series, i, buckets);
    const double end = BucketEdge(series, i + 1, buckets);
    double area = 0;
    double t = begin;
    for (; k < series.changes.size() && BucketOf(series, series.changes[k].x, buckets) <= i; ++k) {
      const double x = std::clamp(series.changes[k].x, begin, end);
      area += current * (x - t);
      t = x;
      current = series.changes[k].y;
    }
    area += current * (end - t);
    out.push_back(area / (end - begin));
  }
  return out;
}

std::vector<PlotPoint> BucketSteps(const StepSeries& series, const std::vector<double>& values) {
  LineBuilder line;
  for (size_t i = 0; i < values.size(); ++i) {
    line.Add(BucketEdge(series, i, values.size()), values[i]);
    line.Add(BucketEdge(series, i + 1, values.size()), values[i]);
  }
  return std::move(line).Take();
}

std::vector<PlotPoint> DrawSteps(const StepSeries& series, BucketReduce reduce) {
  if (2 * series.changes.size() + 2 <= kMaxPointsPerLine) return ExactSteps(series);
  constexpr size_t kBuckets = kMaxPointsPerLine / 2;
  return BucketSteps(series, reduce == BucketReduce::kMax ? BucketMax(series, kBuckets)
                                                          : BucketMean(series, kBuckets));
}

template <typename ValueOf>
StepSeries TimelineSeries(const SimResult& result, core::Time origin, core::Time end,
                          ValueOf value_of) {
  BERTH_CHECK(origin < end) << "empty time range";
  StepSeries series{.lo = 0, .hi = (end - origin).seconds(), .initial = 0, .changes = {}};
  series.changes.reserve(result.timeline.size());
  core::Time previous = origin;
  for (const TimelinePoint& point : result.timeline) {
    BERTH_CHECK(point.at >= previous && point.at <= end)
        << "timeline of " << result.policy << " out of order or range at " << point.at.micros();
    previous = point.at;
    series.changes.push_back({(point.at - origin).seconds(), value_of(point)});
  }
  return series;
}

// ---------------------------------------------------------------------------
// Charts as data: axes with ticks, and lines.

struct Tick {
  double at = 0;
  std::string label;
};

struct Axis {
  double lo = 0;
  double hi = 1;  // > lo
  std::vector<Tick> ticks;
  std::string title;
};

struct Line {
  std::string name;
  std::vector<PlotPoint> points;
};

struct Chart {
  std::string title;
  Axis x;
  Axis y;
  std::vector<Line> lines;
};

// The smallest of 1, 2 or 5 times a power of ten that is >= raw.
double NiceStep(double raw) {
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double mantissa : {1.0, 2.0, 5.0}) {
    if (mantissa * power >= raw) return mantissa * power;
  }
  return 10.0 * power;
}

int DecimalsFor(double step) {
  if (step >= 1) return 0;
  // The slack keeps log10(0.1) = -0.99999... from asking for two decimals.
  return static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
}

// Ticks at 0, step, 2 step, ... up to `last` in axis units; `scale` maps a
// unit to the data value (seconds per day, for example).
std::vector<Tick> LinearTicks(double step, double last, double scale) {
  std::vector<Tick> ticks;
  const int decimals = DecimalsFor(step);
  for (int k = 0; static_cast<double>(k) * step <= last * (1 + 1e-9); ++k) {
    const double at = static_cast<double>(k) * step;
    ticks.push_back({at * scale, FormatFixed(at, decimals)});
  }
  return ticks;
}

// Days when the trace spans more than two days, hours otherwise; the axis ends
// where the data ends, not at the next tick.
Axis TimeAxis(double span_seconds) {
  constexpr double kTwoDays = 2 * 86400.0;
  const bool in_days = span_seconds > kTwoDays;
  const double unit = in_days ? 86400.0 : 3600.0;
  const double span_units = span_seconds / unit;
  return Axis{
      .lo = 0,
      .hi = span_seconds,
      .ticks = LinearTicks(NiceStep(span_units / 6), span_units, unit),
      .title = in_days ? "time since first submit (days)" : "time since first submit (hours)"};
}

// 0 up to a round number at or above `max_value`; steps are whole numbers
// because the values are counts.
Axis CountAxis(double max_value, std::string title) {
  const double step = std::max(1.0, NiceStep(std::max(max_value, 1.0) / 5));
  const double hi = std::max(step, std::ceil(max_value / step) * step);
  return Axis{.lo = 0, .hi = hi, .ticks = LinearTicks(step, hi, 1), .title = std::move(title)};
}

Axis FractionAxis(std::string title) {
  return Axis{.lo = 0, .hi = 1, .ticks = LinearTicks(0.2, 1, 1), .title = std::move(title)};
}

std::string DecadeLabel(int decade) {
  static constexpr std::array<std::string_view, 10> kLabels = {"1",    "10", "100", "1k",   "10k",
                                                               "100k", "1M", "10M", "100M", "1G"};
  if (decade >= 0 && static_cast<size_t>(decade) < kLabels.size()) {
    return std::string(kLabels[static_cast<size_t>(decade)]);
  }
  return "1e" + std::to_string(decade);
}

Axis LogSecondsAxis(int decades) {
  Axis axis{.lo = 0,
            .hi = static_cast<double>(decades),
            .ticks = {},
            .title = "wait (seconds, log scale; waits under 1 s at 1 s)"};
  for (int d = 0; d <= decades; ++d) axis.ticks.push_back({static_cast<double>(d), DecadeLabel(d)});
  return axis;
}

double MaxY(const std::vector<Line>& lines) {
  double max_y = 0;
  for (const Line& line : lines) {
    for (const PlotPoint& p : line.points) max_y = std::max(max_y, p.y);
  }
  return max_y;
}

struct TimeRange {
  core::Time origin;
  core::Time end;
};

// Shared by every policy so their lines align; at least an hour wide so an
// empty or instantaneous run still gives a drawable axis.
TimeRange ChartTimeRange(const std::vector<SimResult>& results) {
  core::Time lo = core::Time::Infinite();
  core::Time hi = core::Time::FromMicros(std::numeric_limits<int64_t>::min());
  for (const SimResult& result : results) {
    lo = core::Min(lo, EarliestSubmit(result));
    if (!result.timeline.empty()) {
      lo = core::Min(lo, result.timeline.front().at);
      hi = core::Max(hi, result.timeline.back().at);
    }
    for (const JobOutcome& job : result.jobs) {
      if (!job.finish.is_infinite()) hi = core::Max(hi, job.finish);
    }
  }
  if (lo.is_infinite()) lo = core::Time::Epoch();
  if (hi <= lo) hi = lo + core::Duration::Hours(1);
  return {lo, hi};
}

Chart QueueLengthChart(const std::vector<SimResult>& results) {
  const TimeRange range = ChartTimeRange(results);
  Chart chart{.title = "Pending jobs (max per interval)", .x = {}, .y = {}, .lines = {}};
  for (const SimResult& result : results) {
    chart.lines.push_back({result.policy, QueueLengthLine(result, range.origin, range.end)});
  }
  chart.x = TimeAxis((range.end - range.origin).seconds());
  chart.y = CountAxis(MaxY(chart.lines), "pending jobs");
  return chart;
}

Chart UtilizationChart(const std::vector<SimResult>& results) {
  const TimeRange range = ChartTimeRange(results);
  Chart chart{.title = "GPU utilization (time-weighted mean per interval)",
              .x = TimeAxis((range.end - range.origin).seconds()),
              .y = FractionAxis("busy GPUs / total GPUs"),
              .lines = {}};
  for (const SimResult& result : results) {
    chart.lines.push_back({result.policy, UtilizationLine(result, range.origin, range.end)});
  }
  return chart;
}

// Whole decades from 1 s to the longest wait of any policy, at least one.
int WaitDecades(const std::vector<SimResult>& results) {
  core::Duration longest = core::Duration::Seconds(1);
  for (const SimResult& result : results) {
    for (const JobOutcome& job : result.jobs) longest = core::Max(longest, job.wait);
  }
  return std::max(1, static_cast<int>(std::ceil(std::log10(longest.seconds()))));
}

Chart WaitCdfChart(const std::vector<SimResult>& results) {
  const int decades = WaitDecades(results);
  Chart chart{.title = "Job wait CDF",
              .x = LogSecondsAxis(decades),
              .y = FractionAxis("fraction of jobs"),
              .lines = {}};
  for (const SimResult& result : results) {
    chart.lines.push_back({result.policy, WaitCdfLine(result, decades)});
  }
  return chart;
}

// ---------------------------------------------------------------------------
// SVG rendering.

constexpr double kPlotLeft = 70;
constexpr double kPlotRight = 610;
constexpr double kPlotTop = 50;
constexpr double kPlotBottom = 390;
constexpr double kLegendX = 625;

// Okabe-Ito: distinguishable with the common colour-vision deficiencies.
// Yellow is last because it is faint on white.
constexpr std::array<std::string_view, 8> kPalette = {"#0072B2", "#D55E00", "#009E73", "#E69F00",
                                                      "#CC79A7", "#56B4E9", "#000000", "#F0E442"};

// Beyond eight policies the colours repeat, so the repeats are dashed.
std::string StrokeAttributes(size_t index) {
  std::string out = "stroke=\"" + std::string(kPalette[index % kPalette.size()]) + "\"";
  if (index >= kPalette.size()) out += " stroke-dasharray=\"6 3\"";
  return out;
}

std::string Px(double v) { return FormatFixed(v, 1); }

double PixelX(const Axis& axis, double x) {
  const double px = kPlotLeft + (x - axis.lo) / (axis.hi - axis.lo) * (kPlotRight - kPlotLeft);
  return std::clamp(px, kPlotLeft, kPlotRight);
}

double PixelY(const Axis& axis, double y) {
  const double py = kPlotBottom - (y - axis.lo) / (axis.hi - axis.lo) * (kPlotBottom - kPlotTop);
  return std::clamp(py, kPlotTop, kPlotBottom);
}

std::string SvgHeader(const std::string& title) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"800\" height=\"450\" "
         "viewBox=\"0 0 800 450\" font-family=\"sans-serif\" font-size=\"12\">\n"
         "<rect width=\"800\" height=\"450\" fill=\"#ffffff\"/>\n"
         "<text x=\"400\" y=\"28\" text-anchor=\"middle\" font-size=\"16\" font-weight=\"bold\">" +
         XmlEscape(title) + "</text>\n";
}

std::string XAxisSvg(const Axis& axis) {
  std::string grid = "<g stroke=\"#e0e0e0\">\n";
  std::string labels = "<g text-anchor=\"middle\" fill=\"#333333\">\n";
  for (const Tick& tick : axis.ticks) {
    const std::string x = Px(PixelX(axis, tick.at));
    grid += "<line x1=\"" + x + "\" y1=\"" + Px(kPlotTop) + "\" x2=\"" + x + "\" y2=\"" +
            Px(kPlotBottom) + "\"/>\n";
    labels += "<text x=\"" + x + "\" y=\"" + Px(kPlotBottom + 18) + "\">" + XmlEscape(tick.label) +
              "</text>\n";
  }
  return grid + "</g>\n" + labels + "</g>\n" + "<text x=\"" + Px((kPlotLeft + kPlotRight) / 2) +
         "\" y=\"430\" text-anchor=\"middle\">" + XmlEscape(axis.title) + "</text>\n";
}

std::string YAxisSvg(const Axis& axis) {
  std::string grid = "<g stroke=\"#e0e0e0\">\n";
  std::string labels = "<g text-anchor=\"end\" fill=\"#333333\">\n";
  for (const Tick& tick : axis.ticks) {
    const double y = PixelY(axis, tick.at);
    grid += "<line x1=\"" + Px(kPlotLeft) + "\" y1=\"" + Px(y) + "\" x2=\"" + Px(kPlotRight) +
            "\" y2=\"" + Px(y) + "\"/>\n";
    labels += "<text x=\"" + Px(kPlotLeft - 6) + "\" y=\"" + Px(y + 4) + "\">" +
              XmlEscape(tick.label) + "</text>\n";
  }
  const std::string middle = Px((kPlotTop + kPlotBottom) / 2);
  return grid + "</g>\n" + labels + "</g>\n" + "<text transform=\"translate(18," + middle +
         ") rotate(-90)\" text-anchor=\"middle\">" + XmlEscape(axis.title) + "</text>\n";
}

std::string FrameSvg() {
  return "<rect x=\"" + Px(kPlotLeft) + "\" y=\"" + Px(kPlotTop) + "\" width=\"" +
         Px(kPlotRight - kPlotLeft) + "\" height=\"" + Px(kPlotBottom - kPlotTop) +
         "\" fill=\"none\" stroke=\"#333333\"/>\n";
}

// Points are rounded to a tenth of a pixel; a point that rounds onto the one
// before it is dropped, since it draws nothing.
std::string PolylineSvg(const Chart& chart, const Line& line, size_t index) {
  std::string points;
  std::string last;
  for (const PlotPoint& p : line.points) {
    std::string xy = Px(PixelX(chart.x, p.x)) + "," + Px(PixelY(chart.y, p.y));
    if (xy == last) continue;
    if (!points.empty()) points += ' ';
    points += xy;
    last = std::move(xy);
  }
  return "<polyline " + StrokeAttributes(index) + " points=\"" + points + "\"/>\n";
}

std::string LinesSvg(const Chart& chart) {
  std::string svg = "<g fill=\"none\" stroke-width=\"1.5\" stroke-linejoin=\"round\">\n";
  for (size_t i = 0; i < chart.lines.size(); ++i) svg += PolylineSvg(chart, chart.lines[i], i);
  return svg + "</g>\n";
}

std::string LegendSvg(const Chart& chart) {
  std::string svg = "<g stroke-width=\"2\">\n";
  for (size_t i = 0; i < chart.lines.size(); ++i) {
    const double y = kPlotTop + 10 + 20 * static_cast<double>(i);
    svg += "<line x1=\"" + Px(kLegendX) + "\" y1=\"" + Px(y) + "\" x2=\"" + Px(kLegendX + 24) +
           "\" y2=\"" + Px(y) + "\" " + StrokeAttributes(i) + "/>\n";
    svg += "<text x=\"" + Px(kLegendX + 30) + "\" y=\"" + Px(y + 4) + "\" stroke=\"none\">" +
           XmlEscape(chart.lines[i].name) + "</text>\n";
  }
  return svg + "</g>\n";
}

std::string RenderSvg(const Chart& chart) {
  return SvgHeader(chart.title) + XAxisSvg(chart.x) + YAxisSvg(chart.y) + FrameSvg() +
         LinesSvg(chart) + LegendSvg(chart) + "</svg>\n";
}

// ---------------------------------------------------------------------------
// Files.

Status EnsureDirectory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!ec && !std::filesystem::is_directory(dir, ec)) {
    ec = std::make_error_code(std::errc::not_a_directory);
  }
  if (ec) return Unavailable("cannot create directory " + dir + ": " + ec.message());
  return Status::Ok();
}

Status WriteFile(const std::string& path, std::string_view contents) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    return Unavailable("cannot open " + path +
                       " for writing: " + std::generic_category().message(errno));
  }
  const size_t written = std::fwrite(contents.data(), 1, contents.size(), file);
  const bool closed = std::fclose(file) == 0;
  if (written != contents.size() || !closed) {
    return Unavailable("cannot write " + path + ": " + std::generic_category().message(errno));
  }
  return Status::Ok();
}

// Two policies whose names differ only in unsafe characters would overwrite
// each other's CSV; refuse rather than lose one silently.
Status CheckDistinctFileNames(const std::vector<SimResult>& results) {
  std::map<std::string, std::string> policy_by_fragment;
  for (const SimResult& result : results) {
    const auto [it, inserted] =
        policy_by_fragment.emplace(SafeFileFragment(result.policy), result.policy);
    if (!inserted) {
      return InvalidArgument("policies '" + it->second + "' and '" + result.policy +
                             "' both map to file jobs-" + it->first + ".csv");
    }
  }
  return Status::Ok();
}

}  // namespace

std::vector<PlotPoint> QueueLengthLine(const SimResult& result, core::Time origin, core::Time end) {
  const StepSeries series = TimelineSeries(result, origin, end, [](const TimelinePoint& p) {
    return static_cast<double>(p.pending_jobs);
  });
  return DrawSteps(series, BucketReduce::kMax);
}

std::vector<PlotPoint> UtilizationLine(const SimResult& result, core::Time origin, core::Time end) {
  const double total = static_cast<double>(result.total_gpus);
  // A cluster without GPUs is never busy; this avoids dividing by zero.
  const StepSeries series = TimelineSeries(result, origin, end, [total](const TimelinePoint& p) {
    return total > 0 ? static_cast<double>(p.busy_gpus) / total : 0.0;
  });
  return DrawSteps(series, BucketReduce::kTimeWeightedMean);
}

std::vector<PlotPoint> WaitCdfLine(const SimResult& result, int decades) {
  BERTH_CHECK(decades >= 1) << "decades must be >= 1, got " << decades;
  if (result.jobs.empty()) return {};
  // Waits under a second share the 1 s column, as the chart's log axis starts there.
  std::vector<int64_t> waits;
  waits.reserve(result.jobs.size());
  for (const JobOutcome& job : result.jobs) {
    waits.push_back(std::max(job.wait.micros(), core::Duration::Seconds(1).micros()));
  }
  std::sort(waits.begin(), waits.end());
  StepSeries series{.lo = 0, .hi = static_cast<double>(decades), .initial = 0, .changes = {}};
  const double n = static_cast<double>(waits.size());
  for (size_t i = 0; i < waits.size(); ++i) {
    // One change per distinct wait: the fraction after its last occurrence.
    if (i + 1 < waits.size() && waits[i + 1] == waits[i]) continue;
    const double x = std::log10(static_cast<double>(waits[i]) / 1e6);
    series.changes.push_back({std::min(x, series.hi), static_cast<double>(i + 1) / n});
  }
  return DrawSteps(series, BucketReduce::kMax);
}

Result<std::vector<std::string>> WriteReports(const std::string& dir,
                                              const std::vector<SimResult>& results) {
  if (results.empty()) return InvalidArgument("results: must not be empty");
  BERTH_RETURN_IF_ERROR(CheckDistinctFileNames(results));
  BERTH_RETURN_IF_ERROR(EnsureDirectory(dir));
  std::vector<std::string> paths;
  // Each file is rendered just before it is written, so only one is held in
  // memory at a time.
  auto write = [&](const std::string& name, const std::string& contents) -> Status {
    std::string path = (std::filesystem::path(dir) / name).string();
    BERTH_RETURN_IF_ERROR(WriteFile(path, contents));
    paths.push_back(std::move(path));
    return Status::Ok();
  };
  for (const SimResult& result : results) {
    BERTH_RETURN_IF_ERROR(
        write("jobs-" + SafeFileFragment(result.policy) + ".csv", JobsCsv(result)));
  }
  BERTH_RETURN_IF_ERROR(write("queue_length.svg", RenderSvg(QueueLengthChart(results))));
  BERTH_RETURN_IF_ERROR(write("utilization.svg", RenderSvg(UtilizationChart(results))));
  BERTH_RETURN_IF_ERROR(write("wait_cdf.svg", RenderSvg(WaitCdfChart(results))));
  return paths;
}

}  // namespace berth::sim
