// A job's request as placement sees it: how many tasks of which shape, and
// which nodes may take them, with names (GPU models, node names, feature
// expressions) resolved against one node table.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/job.h"
#include "core/node_rejection.h"
#include "core/node_table.h"
#include "core/resources.h"

namespace berth::core {

// Which nodes a job's static choices allow (a set of GPU models, nodelist,
// exclude, features), decided once per node for one node table: the
// placement paths read one entry per node they look at instead of matching
// names and expressions.
struct NodeEligibility {
  // Per node id: the first static filter that rejects the node, or nullopt
  // when it is eligible.
  std::vector<std::optional<NodeRejection>> verdict;
  // When the job's expression did not parse (the server refuses such jobs;
  // a hand-made spec could still carry one): why, and every node is
  // rejected by kFeatures.
  std::optional<std::string> error;
};

// A plain value: a cycle copies and moves thousands of them, so it keeps
// no counted pointer that most jobs would carry (a pointer that needed
// counting made every such move cost); `task_shapes` is null for every job
// whose tasks are alike.
struct PlacementRequest {
  int32_t tasks = 1;
  TaskShape shape;
  // nullopt: any GPU model as far as the index goes (all tasks still get
  // one model; `eligibility` may narrow the models further).
  std::optional<GpuTypeId> type;
  // Null: every node of `type` is eligible. Owned by the RequestResolver
  // that made the request (requests of one set of constraints share it),
  // which must outlive the request, or by what keeps a copy of its
  // eligibilities (EtaPlan::eligibility).
  const NodeEligibility* eligibility = nullptr;
  GpuLocality locality = GpuLocality::kAny;
  NodeSpread spread = NodeSpread::kAny;
  // Null: every task has `shape`. Else the job's one shape per task
  // (`shape` is the largest of them), on distinct nodes.
  TaskShapes task_shapes = nullptr;

  const TaskShape& ShapeOf(size_t task) const { return task_shapes ? (*task_shapes)[task] : shape; }
  // Whole GPUs of every task together.
  int64_t TotalWholeGpus() const;
};

// Resolves jobs' requests against one node table. Jobs without constraints
// and with at most one GPU model resolve at once; each distinct set of
// constraints is matched against every node once per resolver (per cycle),
// however many jobs share it.
class RequestResolver {
 public:
  // `nodes` must outlive the resolver and not change while it is used.
  explicit RequestResolver(const NodeTable& nodes) : nodes_(nodes) {}
  RequestResolver(const RequestResolver&) = delete;
  RequestResolver& operator=(const RequestResolver&) = delete;

  PlacementRequest Resolve(const JobSpec& spec) {
    // Most jobs: any model and no constraints, read from the job's shape.
    if (spec.gpu_types.empty() && !spec.constraints) {
      return PlacementRequest{spec.tasks,        spec.task,        std::nullopt,    nullptr,
                              spec.gpu_locality, spec.node_spread, spec.task_shapes};
    }
    return ResolveConstrained(spec);
  }

  // Every eligibility the resolver made, for what must keep the requests
  // that point at them valid after the resolver is gone.
  std::vector<std::shared_ptr<const NodeEligibility>> Eligibilities() const;

 private:
  PlacementRequest ResolveConstrained(const JobSpec& spec);

  using Key = std::tuple<std::vector<std::string>, NodeConstraints>;
  const NodeTable& nodes_;
  std::map<Key, std::shared_ptr<const NodeEligibility>> eligibility_;
};

// One job's request without a resolver's memory (O(nodes) when the job has
// constraints), with the eligibility its request points at: keep the whole
// value while the request is in use.
struct ResolvedRequest {
  PlacementRequest request;
  std::shared_ptr<const NodeEligibility> eligibility;
};
ResolvedRequest ResolveRequest(const NodeTable& nodes, const JobSpec& spec);

}  // namespace berth::core
