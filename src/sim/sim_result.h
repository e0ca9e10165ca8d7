// What one simulated run produced: per-job outcomes and a cluster timeline.
// Metrics (metrics.h) and reports (report.h, plots.h) are computed from it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/eta_interval.h"
#include "core/ids.h"
#include "core/time.h"

namespace berth::sim {

struct JobOutcome {
  core::JobId id{};
  int64_t trace_line = 0;
  std::string queue;
  int32_t gpus = 0;  // total whole GPUs
  core::Time submit;
  core::Time first_start;
  core::Time finish;
  core::Duration duration;  // true run time, without restart overhead
  // Time spent waiting in the queue: first wait plus every wait after a
  // preemption. JCT = wait + run time (including restart overhead).
  core::Duration wait;
  int32_t preemptions = 0;
  // Work thrown away by preemptions (run time since the last checkpoint),
  // and time spent restarting (the restart cost actually paid), both summed
  // over the job's runs.
  core::Duration lost_work;
  core::Duration restart_overhead;
  // Policies that predict: the run time predicted when the job arrived.
  std::optional<core::Duration> predicted;
  // With SimOptions::measure_eta, for jobs that had to queue on arrival: the
  // first ETA the policy gave (nullopt inside: it gave none).
  std::optional<std::optional<core::Time>> first_eta;
  // With the first ETA, its 80% interval (core/eta_interval.h).
  std::optional<core::EtaInterval> first_eta_interval;

  core::Duration jct() const { return finish - submit; }
};

// The cluster after each decision: a step function over time.
struct TimelinePoint {
  core::Time at;
  int64_t pending_jobs = 0;
  int64_t busy_gpus = 0;
};

struct SimResult {
  std::string policy;
  int64_t total_gpus = 0;
  std::vector<JobOutcome> jobs;  // ascending id
  std::vector<TimelinePoint> timeline;
  int64_t events = 0;
  int64_t decisions = 0;
  double wall_seconds = 0;  // measured by the driver; the only non-deterministic field
  bool by_team = false;     // the run had team queues: report per team
};

}  // namespace berth::sim
