// The discrete-event simulator: replays a workload through the scheduling
// core, exactly as the server drives it, with no wall-clock sleeping.
//
// Events: arrivals (a job joins ClusterState), completions (its true
// duration, plus restart overhead after a preemption, has elapsed) and
// wake-ups the policy asks for (Decision::next_decision). At one instant,
// completions are applied before arrivals; then Decide runs once and its
// preemptions and starts are applied at that instant. A preempted job keeps
// the work it did up to its last checkpoint and pays the restart cost again
// on its next start: with no checkpoint interval, as if it saved at the
// instant it was stopped (the reference simulators' assumption); with
// SimOptions::checkpoint_interval S, it saves every S of each run's time
// (core/checkpoint.h: the victim choice sees the same loss) and loses the
// work since. Policies that predict learn from each job
// as it completes, and only then: nothing reads a true duration earlier.
#pragma once

#include <functional>
#include <optional>
#include <string_view>

#include "common/status.h"
#include "core/policy.h"
#include "core/restart_cost.h"
#include "sim/sim_result.h"
#include "sim/workload.h"

namespace berth::sim {

struct SimProgress {
  std::string_view policy;
  std::string_view partition;
  core::Time now;
  core::Time first_submit;
  core::Time last_submit;
  int64_t finished = 0;
  int64_t total = 0;
};

struct SimOptions {
  core::PolicyConfig policy_config;
  core::RestartCostModel restart_cost;
  // Every job saves its work every this much run time (counted from each
  // run's start, restart included); unset: at the instant it is stopped.
  std::optional<core::Duration> checkpoint_interval;
  // Team queues with quotas (empty: none). The result then reports per team.
  std::vector<core::QueueSpec> queues;
  // Record the first ETA of every job that has to queue on arrival (a full
  // explanation pass at each arrival instant: slower).
  bool measure_eta = false;
  // Called every `progress_every` events, for progress reports on long runs.
  std::function<void(const SimProgress&)> on_progress;
  int64_t progress_every = 50'000;
};

// Runs one policy over one partition's workload.
Result<SimResult> Simulate(const Workload& workload, std::string_view policy,
                           const SimOptions& options = {});

// Joins per-partition results of one policy into one (jobs by id, timelines
// summed as step functions).
SimResult MergeResults(std::vector<SimResult> parts);

}  // namespace berth::sim
