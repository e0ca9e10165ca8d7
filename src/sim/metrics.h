// Summary metrics of a simulated run, as `berth sim --json` prints them.
//
// Definitions (seconds):
//   JCT     finish - submit.
//   wait    time spent queued: the first wait plus every wait after a
//           preemption (restart overhead counts as run time, not wait).
//   pXX     nearest-rank percentile: the smallest value with at least XX% of
//           jobs at or below it.
//   makespan  last finish - first submit.
//   gpu_utilization  GPU-seconds held by jobs / (GPUs x makespan).
//   p999_wait_s  the 99.9th percentile wait.
//   prediction_mdape  policies that predict: median over jobs of
//           |predicted - actual| / actual, the prediction made at arrival.
//   eta_within_25pct  with ETA measurement: the share of jobs that queued on
//           arrival and started within 25% (or 10 minutes, whichever is
//           larger) of the wait their first ETA promised.
//   lost_gpu_hours  GPU-hours of work that preemptions threw away (run time
//           since each victim's last checkpoint x its GPUs); 0 unless the
//           run had a checkpoint interval.
//   restart_gpu_hours  GPU-hours spent restarting after preemptions (the
//           restart cost paid x GPUs).
//   preemptions_per_job  p50, p99 and max over all jobs of the times each
//           was preempted.
//   eta_p80_coverage  with ETA measurement: the share of the same jobs whose
//           first start fell inside the 80% interval given with their first
//           ETA (no ETA: a miss). Well calibrated near 0.8.
//   lb_avg_jct_s  a lower bound on the average JCT of any schedule: the
//           larger of the no-wait bound (mean duration) and the fluid bound
//           (preemptive SRPT on one machine as fast as the whole cluster,
//           each job's work being duration x GPUs; optimal for that relaxed
//           problem, so no real schedule does better).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/sim_result.h"

namespace berth::sim {

// One team queue's jobs (runs with team queues).
struct TeamSummary {
  std::string queue;
  int64_t jobs = 0;
  double avg_wait_s = 0;
  double avg_jct_s = 0;
  // Mean bounded slowdown: JCT / max(run time, 60 s), at least 1.
  double avg_slowdown = 0;
};

// Nearest-rank p50 and p99, and the maximum, of a per-job count.
struct Spread {
  double p50 = 0;
  double p99 = 0;
  double max = 0;
};

struct Summary {
  std::string policy;
  int64_t jobs = 0;
  double avg_jct_s = 0;
  double p50_jct_s = 0;
  double p99_jct_s = 0;
  double avg_wait_s = 0;
  double p50_wait_s = 0;
  double p99_wait_s = 0;
  double p999_wait_s = 0;
  double max_wait_s = 0;
  double makespan_s = 0;
  double gpu_utilization = 0;
  double lb_avg_jct_s = 0;
  std::optional<double> prediction_mdape;
  std::optional<double> eta_within_25pct;
  std::optional<double> eta_p80_coverage;
  int64_t preemptions = 0;
  Spread preemptions_per_job;
  double lost_gpu_hours = 0;
  double restart_gpu_hours = 0;
  std::vector<TeamSummary> teams;  // by queue name, with team queues only
  // Jain's index over the teams' mean bounded slowdowns: 1 when every team
  // is slowed alike, 1/n when one team takes all the slowdown.
  std::optional<double> jain_fairness;
  int64_t events = 0;
  double sim_wall_s = 0;
};

Summary Summarize(const SimResult& result);

// Nearest-rank percentile of unsorted values; 0 for none. REQUIRES 0 < p <= 100.
double Percentile(std::vector<double> values, double p);

// The share of jobs with a first ETA whose start fell within tolerance of it.
std::optional<double> EtaAccuracy(const std::vector<JobOutcome>& jobs);

// The share of jobs with a first ETA whose start fell inside its interval.
std::optional<double> EtaIntervalCoverage(const std::vector<JobOutcome>& jobs);

// Median absolute percentage error of the predictions made at arrival.
std::optional<double> PredictionMdape(const std::vector<JobOutcome>& jobs);

// Per-team figures and Jain's index over their mean bounded slowdowns.
std::vector<TeamSummary> SummarizeTeams(const std::vector<JobOutcome>& jobs);
double JainIndex(const std::vector<double>& values);

// The fluid single-machine SRPT bound on average JCT (see above).
double FluidSrptAverageJct(const std::vector<JobOutcome>& jobs, int64_t total_gpus);

}  // namespace berth::sim
