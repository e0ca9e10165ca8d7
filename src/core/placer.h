// Placement: where a job's tasks go on the free capacity, or why they cannot.
//
// The rule (the "consolidated" rule every reference policy uses, so results
// can be checked against other simulators):
//   1. Filter: nodes that are schedulable, of the requested GPU model, with
//      enough free whole GPUs, CPU and memory for the tasks they would host.
//   2. A job whose tasks all fit on one node goes to the node with the fewest
//      free GPUs that still fits it (best fit: the least unusable remainder),
//      ties to the lowest node id.
//   3. A gang that fits no single node takes the fewest nodes: nodes with the
//      most free GPUs first (whole idle nodes for whole-node tasks), ties to
//      the lowest id, and the last, partly used node by best fit.
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
#include "core/node_table.h"
#include "core/placement.h"
#include "core/reason.h"

namespace berth::core {

struct PlacementRequest {
  int32_t tasks = 1;
  TaskShape shape;
  // nullopt: any GPU model (all tasks still get one model).
  std::optional<GpuTypeId> type;
};

// A job's request with its model name resolved against the cluster;
// known_type is false when no node has the model the job names.
struct ResolvedRequest {
  PlacementRequest request;
  bool known_type = true;
};
ResolvedRequest ResolveRequest(const NodeTable& nodes, const JobSpec& spec);

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
// by shape.
bool FitsEmptyCluster(const NodeTable& nodes, const PlacementRequest& request);

// Why Place failed on this capacity: resources, fragmentation or unavailable
// nodes. REQUIRES: FitsEmptyCluster(request) and !Place(capacity, request).
ReasonCode DiagnoseBlocked(const Capacity& capacity, const PlacementRequest& request);

// Placement outcomes as values: Placed, Blocked (fits the cluster, not free
// now) or Infeasible (can never fit).
struct Placed {
  Placement placement;
};
struct Blocked {
  ReasonCode reason;
};
struct Infeasible {
  std::string why;
};
using PlacementOutcome = std::variant<Placed, Blocked, Infeasible>;

}  // namespace berth::core
