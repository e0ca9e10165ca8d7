// Reports for `berth sim --out DIR`: one per-job CSV per policy and three SVG
// charts that compare the policies (queue length, GPU utilization, wait CDF).
//
// Charts are reports, not accounting, so they use doubles; the CSV prints
// times exactly from the integer microseconds.
//
// A weeks-long trace gives 150k+ timeline points per policy, far more than an
// 800-pixel-wide chart can show, so every line is downsampled to at most
// kMaxPointsPerLine points. Lines with few points are drawn exactly; longer
// ones are cut into kMaxPointsPerLine / 2 equal buckets along x (about two per
// pixel column) and drawn as a step per bucket, with a reduction chosen per
// chart:
//   - queue length keeps the maximum per bucket: a backlog peak is what a
//     reader looks for, and a mean would flatten a short burst away;
//   - utilization keeps the time-weighted mean per bucket: that keeps the area
//     under the line (busy GPU-hours) exact, where a max would overstate it;
//   - the wait CDF keeps the maximum per log-x bucket, which for a rising
//     curve is its value at the bucket's right edge, so a rise is drawn at most
//     one bucket (under a pixel) early.
//
// Output is a pure function of the input: the same results give
// byte-identical files. Not thread-safe to call on one `dir` concurrently.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/status.h"
#include "core/time.h"
#include "sim/sim_result.h"

namespace berth::sim {

// The most points one plotted line may hold.
inline constexpr size_t kMaxPointsPerLine = 2000;

// One vertex of a plotted line, in the chart's data units.
struct PlotPoint {
  double x = 0;
  double y = 0;

  friend bool operator==(const PlotPoint&, const PlotPoint&) = default;
};

// The lines behind the charts, exposed so the downsampling contract can be
// checked without parsing SVG. Each is a step line: a value holds from its
// point until the next point's x. Each has at most kMaxPointsPerLine points.
//
// Pending jobs over [origin, end]; x is seconds since `origin`. Before the
// first timeline point the queue is taken as empty.
// REQUIRES: result.timeline ascending by `at`, all of it within [origin, end];
// origin < end.
std::vector<PlotPoint> QueueLengthLine(const SimResult& result, core::Time origin, core::Time end);
// Busy GPUs / total GPUs (0..1) over [origin, end], as QueueLengthLine.
std::vector<PlotPoint> UtilizationLine(const SimResult& result, core::Time origin, core::Time end);
// Fraction of jobs with wait <= x, over x = log10(wait in seconds) from 0 (1 s)
// to `decades`; waits under 1 s count at 1 s. Empty when there are no jobs.
// REQUIRES: decades >= 1.
std::vector<PlotPoint> WaitCdfLine(const SimResult& result, int decades);

// Writes into `dir` (created if missing):
//   jobs-<policy>.csv  one row per job: id,trace_line,queue,gpus,submit_s,
//                      start_s,finish_s,duration_s,wait_s,jct_s,preemptions,
//                      predicted_s,eta_s,eta_low_s,eta_high_s (the run time
//                      predicted at arrival, the first ETA and its 80%
//                      interval: empty where the run has none). Times
//                      are seconds since the earliest submit of that
//                      result, exact to the microsecond with trailing zeros
//                      dropped ("12", "12.5", "3.000001"). A time that never
//                      came (Time::Infinite()) is an empty field.
//   queue_length.svg   pending jobs over time, one line per policy
//   utilization.svg    busy GPUs / total GPUs over time, one line per policy
//   wait_cdf.svg       CDF of per-job wait, one line per policy
// <policy> is the policy name with every character outside [A-Za-z0-9._-]
// replaced by '_'. The time charts share one x range: from the earliest submit
// or timeline point of any result to the latest timeline point or finish.
//
// Returns the paths written: the CSVs in input order, then the three charts.
// Fails with InvalidArgument when `results` is empty or two policy names give
// the same file name, and with Unavailable naming the path when the directory
// or a file cannot be written (files written before the failure are left).
Result<std::vector<std::string>> WriteReports(const std::string& dir,
                                              const std::vector<SimResult>& results);

}  // namespace berth::sim
