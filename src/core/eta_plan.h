// The ETA plan of a full cycle as plain values, so that it can run apart
// from the cycle (DecideOptions::defer_etas): the server plans ETAs on its
// own thread, outside the lock that submits, heartbeats and event cycles
// need. The plan itself is eta.h's: the discipline replayed on the
// expected ends of running work, with a reservation and backfill, once per
// replay over run times drawn from what the estimator knows of them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/capacity.h"
#include "core/discipline.h"
#include "core/ids.h"
#include "core/node_table.h"
#include "core/placement.h"
#include "core/placer.h"
#include "core/time.h"

namespace berth::core {

struct EtaPlan {
  struct End {
    Time at;
    JobId job{};
    Placement placement;
    // The latest it can end: its run's start plus its time limit and its
    // grace period (none: it has no time limit).
    std::optional<Time> latest = std::nullopt;
    // Its remaining run time at the plan's `replays` quantiles, ascending
    // (RuntimeEstimator::RemainingQuantiles); empty: `at` in every replay.
    std::vector<Duration> remaining_quantiles = {};
  };
  struct Step {
    JobId job{};
    PlacementRequest request;
    Duration remaining;  // expected run time once started
    // The longest it can run once started: its time limit plus its grace
    // period (none: it has no time limit).
    std::optional<Duration> longest = std::nullopt;
    // Its run time at the plan's `replays` quantiles, as End's; empty:
    // `remaining` in every replay.
    std::vector<Duration> remaining_quantiles = {};
  };
  Time now;
  Discipline discipline = Discipline::kStrict;  // the policy's, which the plan replays
  // A copy of the cluster's nodes, which `capacity` follows: the plan does
  // not read the live table, which changes under it.
  std::shared_ptr<const NodeTable> nodes;
  Capacity capacity;      // free once the cycle's starts are placed
  std::vector<End> ends;  // expected ends of running work and of the cycle's starts
  std::vector<Step>
      queue;  // pending jobs in order (those waiting for quota or a user limit left out)
  // What the steps' requests point at (their constraints' eligible nodes):
  // the cycle that resolved them is gone when the plan runs.
  std::vector<std::shared_ptr<const NodeEligibility>> eligibility;
  // How many times the discipline is replayed (Policy::eta_replays); 1:
  // once, on expected run times.
  int32_t replays = 1;
};

struct PlannedEta {
  JobId job{};
  std::optional<Time> eta;  // none: it needs nodes that are down or draining
  std::optional<JobId> after_job;
  // The start that time limits guarantee, where they bind: the same plan
  // with every running job ending at its `latest` and every job ahead
  // running its `longest`. None when a running job, this job or one ahead
  // of it has no time limit. Like the ETA, it holds for the queue as it
  // stands: a later job that ranks ahead, or a node that goes down, moves it.
  std::optional<Time> latest = std::nullopt;
};

// One entry per step of the plan, in its order: the median of the
// replays' ETAs for it (eta.cc). Pure; any thread.
std::vector<PlannedEta> PlanEtas(const EtaPlan& plan);

}  // namespace berth::core
