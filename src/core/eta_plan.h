// The ETA plan of a full cycle as plain values, so that it can run apart
// from the cycle (DecideOptions::defer_etas): the server plans ETAs on its
// own thread, outside the lock that submits, heartbeats and event cycles
// need. The plan itself is eta.h's: pending jobs start in policy order, each
// no earlier than the one before it, as running work ends.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "core/capacity.h"
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
  };
  struct Step {
    JobId job{};
    PlacementRequest request;
    Duration remaining;  // expected run time once started
  };
  Time now;
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
};

struct PlannedEta {
  JobId job{};
  std::optional<Time> eta;  // none: it needs nodes that are down or draining
  std::optional<JobId> after_job;
};

// One entry per step of the plan, in its order. Pure; any thread.
std::vector<PlannedEta> PlanEtas(EtaPlan plan);

}  // namespace berth::core
