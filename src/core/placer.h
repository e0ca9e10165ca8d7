// Placement: where a job's tasks go on the free capacity, or why they cannot.
//
// The rule (the "consolidated" rule every reference policy uses, so results
// can be checked against other simulators):
//   1. Filter: the node feasibility pipeline (node_filters.h) says how many
//      of the tasks each node can host: up, of an accepted GPU model, within
//      the job's constraints, with the free GPUs, CPU and memory.
//   2. A job whose tasks all fit on one node goes to the node with the fewest
//      free GPUs that still fits it (best fit: the least unusable remainder),
//      ties to the lowest node id.
//   3. A gang that fits no single node takes the fewest nodes: nodes with the
//      most free GPUs first (whole idle nodes for whole-node tasks), ties to
//      the lowest id, and the last, partly used node by best fit.
//   A gang on distinct nodes (NodeSpread::kDistinctNodes) has one task per
//   node by the pipeline's spread filter, so step 3 gives it one node each.
//   A gang whose tasks differ in shape (JobSpec::task_shapes, always on
//   distinct nodes) places its largest task first, each by best fit among
//   the nodes of one model it has not taken.
//   4. On a node, a task's GPUs come from one interconnect group when one has
//      room (the fullest group that fits), else from as few groups as possible.
// GPU shares (< 1 GPU) go to the device with the least share left that fits.
//
// A second rule can be asked for through PlaceOptions: fragmentation-aware
// placement (fragmentation.h), which places a single task where it leaves the
// least GPU capacity that a target workload could not use.
//
// Stateless and deterministic; reads a Capacity, never changes it.
#pragma once

#include <optional>
#include <string>
#include <variant>

#include "core/capacity.h"
#include "core/job.h"
#include "core/node_filters.h"
#include "core/node_table.h"
#include "core/placement.h"
#include "core/placement_request.h"
#include "core/reason.h"

namespace berth::core {

class FragmentationModel;

// How Place chooses among the placements that fit. The default is the
// best-fit rule above.
struct PlaceOptions {
  // Set: single-task requests take the fragmentation-aware rule of
  // fragmentation.h against this workload model (which must outlive the
  // call); gangs keep the best-fit gang rule. Null: best fit.
  const FragmentationModel* fragmentation = nullptr;
  // With `fragmentation`: whole-GPU tasks score one node per bucket
  // (ChooseWholeGpusByBucket) instead of every node.
  bool whole_gpus_by_bucket = false;
};

// The placement on current free capacity, or nullopt. Whether a request fits
// does not depend on the options, only where it goes.
std::optional<Placement> Place(const Capacity& capacity, const PlacementRequest& request,
                               const PlaceOptions& options = {});

// Whether the request would fit if every node were up, healthy and empty.
// O(nodes) at worst (it stops at the first model with room); callers cache
// by request.
bool FitsEmptyCluster(const NodeTable& nodes, const PlacementRequest& request);

// Why a request that fits the empty cluster does not fit now, from the
// pipeline's tally on the capacity: every eligible node is down or
// draining (kNodesUnavailable), enough GPUs of one model are free but not
// on few enough nodes (kFragmentation), or too few are (kResources).
ReasonCode BlockedReason(const NodeTally& tally, const PlacementRequest& request);
// The same on the capacity: without constraints the capacity's per-model
// index gives the tally's counts in O(models); with them, TallyNow.
ReasonCode BlockedReason(const Capacity& capacity, const PlacementRequest& request);

// Placement outcomes as values: Placed, Blocked (fits the cluster, not free
// now) or Infeasible (can never fit), with the pipeline's tally over every
// node saying why.
struct Placed {
  Placement placement;
};
struct Blocked {
  ReasonCode reason;
  NodeTally nodes;
};
struct Infeasible {
  NodeTally nodes;  // as if every node were up and empty
};
using PlacementOutcome = std::variant<Placed, Blocked, Infeasible>;

// Place, and when it fails, why. O(nodes) when the request does not fit
// now: the fast paths call Place, explanations call this.
PlacementOutcome PlaceOrExplain(const Capacity& capacity, const PlacementRequest& request,
                                const PlaceOptions& options = {});

}  // namespace berth::core
