#include "core/placer.h"

#include <algorithm>
#include <bit>
#include <map>
#include <vector>

#include "common/check.h"
#include "core/fragmentation.h"

namespace berth::core {
namespace {

// The models a request may use, ascending id.
std::vector<GpuTypeId> CandidateTypes(const NodeTable& nodes, const PlacementRequest& request) {
  if (request.type) return {*request.type};
  std::vector<GpuTypeId> types;
  for (size_t t = 0; t < nodes.type_count(); ++t) types.push_back(static_cast<GpuTypeId>(t));
  return types;
}

GpuMask LowestBits(GpuMask mask, int count) {
  GpuMask out = 0;
  for (int i = 0; i < count; ++i) {
    BERTH_CHECK(mask != 0) << "not enough devices";
    const GpuMask bit = mask & (~mask + 1);
    out |= bit;
    mask &= ~bit;
  }
  return out;
}

// Picks `count` devices from `free` on a node, keeping a task inside one
// interconnect group when one has room (the fullest such group, so roomy
// groups stay whole for bigger tasks), else spanning the fewest groups.
GpuMask PickDevices(const NodeSpec& spec, GpuMask free, int count) {
  std::map<int, GpuMask> by_group;  // group id -> its free devices
  for (GpuMask bits = free; bits != 0; bits &= bits - 1) {
    const int gpu = std::countr_zero(bits);
    by_group[spec.gpus[static_cast<size_t>(gpu)].interconnect_group] |= GpuMask{1} << gpu;
  }
  if (by_group.size() <= 1) return LowestBits(free, count);

  const GpuMask* best = nullptr;
  for (const auto& [group, mask] : by_group) {
    if (CountGpus(mask) >= count && (best == nullptr || CountGpus(mask) < CountGpus(*best))) {
      best = &mask;
    }
  }
  if (best != nullptr) return LowestBits(*best, count);

  std::vector<std::pair<int, GpuMask>> groups(by_group.begin(), by_group.end());
  std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
    return CountGpus(a.second) > CountGpus(b.second);
  });
  GpuMask out = 0;
  int left = count;
  for (const auto& [group, mask] : groups) {
    const int take = std::min(left, CountGpus(mask));
    out |= LowestBits(mask, take);
    left -= take;
    if (left == 0) break;
  }
  return out;
}

// Adds `count` whole-GPU tasks on `node` to the placement.
void AddTasksOnNode(const Capacity& capacity, NodeId node, int64_t count, Placement& placement) {
  const NodeSpec& spec = capacity.nodes().spec(node);
  GpuMask free = capacity.free_gpus(node);
  for (int64_t i = 0; i < count; ++i) {
    const GpuMask gpus = PickDevices(spec, free, placement.shape.whole_gpus());
    free &= ~gpus;
    placement.tasks.push_back(TaskPlacement{node, gpus});
  }
}

// Best fit for all tasks on one node: the schedulable node with the fewest
// free GPUs that fits them, ties to the lowest id.
std::optional<NodeId> BestSingleNode(const Capacity& capacity, const PlacementRequest& request,
                                     const std::vector<GpuTypeId>& types) {
  const int need = request.shape.whole_gpus() * request.tasks;
  const int max_free = capacity.nodes().max_gpus_any();
  for (int free = need; free <= max_free; ++free) {
    std::optional<NodeId> best;
    for (GpuTypeId type : types) {
      if (free > capacity.nodes().max_gpus(type)) continue;
      capacity.ForEachWithFree(type, free, [&](NodeId node) {
        if (best && *best < node) return true;  // cannot beat the best of another model
        if (TasksThatFit(capacity, node, request) < request.tasks) return false;
        best = node;
        return true;
      });
    }
    if (best) return best;
  }
  return std::nullopt;
}

// Fewest nodes for a gang of one model: most free GPUs first, then the last
// node replaced by the best fit for what is left.
std::optional<Placement> PlaceGangOnType(const Capacity& capacity, const PlacementRequest& request,
                                         GpuTypeId type) {
  const int per_task = request.shape.whole_gpus();
  std::vector<std::pair<NodeId, int64_t>> chosen;
  int64_t left = request.tasks;
  for (int free = capacity.nodes().max_gpus(type); free >= per_task && left > 0; --free) {
    capacity.ForEachWithFree(type, free, [&](NodeId node) {
      const int64_t take = std::min(left, TasksThatFit(capacity, node, request));
      if (take <= 0) return false;
      chosen.emplace_back(node, take);
      left -= take;
      return left == 0;
    });
  }
  if (left > 0) return std::nullopt;

  // Nodes with fewer free GPUs than the last pick were never visited, so any
  // of them that holds the last pick's tasks is a better fit.
  auto& [last_node, last_tasks] = chosen.back();
  const int last_free = capacity.free_gpu_count(last_node);
  for (int free = static_cast<int>(last_tasks) * per_task; free < last_free; ++free) {
    const bool found = capacity.ForEachWithFree(type, free, [&](NodeId node) {
      if (TasksThatFit(capacity, node, request) < last_tasks) return false;
      last_node = node;
      return true;
    });
    if (found) break;
  }

  Placement placement;
  placement.shape = request.shape;
  for (const auto& [node, count] : chosen) AddTasksOnNode(capacity, node, count, placement);
  return placement;
}

std::optional<Placement> PlaceWholeGpus(const Capacity& capacity, const PlacementRequest& request) {
  const std::vector<GpuTypeId> types = CandidateTypes(capacity.nodes(), request);
  // Cheap bound first: blocked jobs are asked about on every cycle.
  int64_t free = 0;
  for (GpuTypeId type : types) free += capacity.free_gpus_of_type(type);
  if (free < static_cast<int64_t>(request.shape.whole_gpus()) * request.tasks) return std::nullopt;
  if (std::optional<NodeId> node = BestSingleNode(capacity, request, types)) {
    Placement placement;
    placement.shape = request.shape;
    AddTasksOnNode(capacity, *node, request.tasks, placement);
    return placement;
  }
  if (request.tasks == 1) return std::nullopt;
  // A gang never mixes GPU models; with no model named, the first model (by
  // id) that holds it wins.
  for (GpuTypeId type : types) {
    if (std::optional<Placement> placement = PlaceGangOnType(capacity, request, type)) {
      return placement;
    }
  }
  return std::nullopt;
}

// A gang whose tasks differ in shape, always on distinct nodes: the nodes
// of one model, by rank, or nullopt. The largest task first, each on the
// node that fits it with the fewest free GPUs (best fit, ties to the lowest
// id) among those the gang has not taken. A scan of the model's nodes per
// task: such jobs are few, and the free-GPU index cannot say whether a
// task of another shape fits. `view_of(node)` is a LiveNode or an
// EmptyNode (node_filters.h).
template <typename ViewOf>
std::optional<std::vector<NodeId>> AssignUnevenTasks(const NodeTable& nodes,
                                                     const PlacementRequest& request,
                                                     GpuTypeId type, ViewOf view_of) {
  std::vector<size_t> largest_first(static_cast<size_t>(request.tasks));
  for (size_t rank = 0; rank < largest_first.size(); ++rank) largest_first[rank] = rank;
  std::stable_sort(largest_first.begin(), largest_first.end(),
                   [&](size_t a, size_t b) { return request.ShapeOf(b) < request.ShapeOf(a); });
  std::vector<NodeId> by_rank(largest_first.size());
  std::vector<bool> taken(nodes.size(), false);
  PlacementRequest one = request;
  one.tasks = 1;
  one.task_shapes = nullptr;
  for (size_t rank : largest_first) {
    one.shape = request.ShapeOf(rank);
    std::optional<NodeId> best;
    int best_free = 0;
    for (size_t n = 0; n < nodes.size(); ++n) {
      const NodeId node = static_cast<NodeId>(n);
      if (taken[n] || nodes.type_of(node) != type) continue;
      const auto view = view_of(node);
      if (FitOn(view, one).tasks < 1) continue;
      if (!best || view.free_gpus() < best_free) {
        best = node;
        best_free = view.free_gpus();
      }
    }
    if (!best) return std::nullopt;
    taken[Index(*best)] = true;
    by_rank[rank] = *best;
  }
  return by_rank;
}

std::optional<Placement> PlaceUnevenGang(const Capacity& capacity,
                                         const PlacementRequest& request) {
  for (GpuTypeId type : CandidateTypes(capacity.nodes(), request)) {
    const std::optional<std::vector<NodeId>> nodes = AssignUnevenTasks(
        capacity.nodes(), request, type, [&](NodeId node) { return LiveNode(capacity, node); });
    if (!nodes) continue;
    Placement placement;
    placement.shape = request.shape;
    placement.task_shapes = request.task_shapes;
    for (size_t rank = 0; rank < nodes->size(); ++rank) {
      const NodeId node = (*nodes)[rank];
      const int whole = request.ShapeOf(rank).whole_gpus();
      const GpuMask gpus =
          whole > 0 ? PickDevices(capacity.nodes().spec(node), capacity.free_gpus(node), whole) : 0;
      placement.tasks.push_back(TaskPlacement{node, gpus});
    }
    return placement;
  }
  return std::nullopt;
}

// Shares of one GPU and CPU-only tasks: few enough in practice that a scan
// of the nodes is fine. Each task independently takes the tightest fit.
std::optional<Placement> PlaceByScan(const Capacity& capacity, const PlacementRequest& request) {
  const bool share = request.shape.wants_share();
  const int64_t want = request.shape.gpu.value();
  std::map<std::pair<NodeId, int>, int64_t> taken_milli;  // by this job so far
  std::map<NodeId, int64_t> taken_tasks;

  Placement placement;
  placement.shape = request.shape;
  for (int32_t t = 0; t < request.tasks; ++t) {
    std::optional<TaskPlacement> best;
    int64_t best_left = 0;
    for (size_t n = 0; n < capacity.node_count(); ++n) {
      const NodeId node = static_cast<NodeId>(n);
      // find, not operator[]: a scan must not grow the maps by every node.
      const auto taken_here = taken_tasks.find(node);
      const int64_t tasks_here = (taken_here == taken_tasks.end() ? 0 : taken_here->second) + 1;
      // Each task this job placed here took a share from one device, so the
      // node has room for one more exactly when it hosts tasks_here of them.
      if (TasksThatFit(capacity, node, request) < tasks_here) continue;
      if (!share) {
        // CPU-only: the node with the least CPU left that fits.
        const int64_t left =
            capacity.free_cpu(node).value() - request.shape.cpu.value() * tasks_here;
        if (!best || left < best_left) {
          best = TaskPlacement{node, 0};
          best_left = left;
        }
        continue;
      }
      const size_t gpu_count = capacity.nodes().spec(node).gpus.size();
      for (size_t g = 0; g < gpu_count; ++g) {
        const int gpu = static_cast<int>(g);
        const auto taken_device = taken_milli.find({node, gpu});
        const int64_t taken = taken_device == taken_milli.end() ? 0 : taken_device->second;
        const int64_t left = capacity.free_milli(node, gpu) - taken - want;
        if (left < 0) continue;
        if (!best || left < best_left) {
          best = TaskPlacement{node, GpuMask{1} << g};
          best_left = left;
        }
      }
    }
    if (!best) return std::nullopt;
    if (share) taken_milli[{best->node, std::countr_zero(best->gpus)}] += want;
    ++taken_tasks[best->node];
    placement.tasks.push_back(*best);
  }
  return placement;
}

// One task where the fragmentation model says it does least harm; the
// devices of a whole-GPU task follow the interconnect rule on that node.
std::optional<Placement> PlaceByFragmentation(const Capacity& capacity,
                                              const PlacementRequest& request,
                                              const PlaceOptions& options) {
  const FragmentationModel& model = *options.fragmentation;
  const std::optional<FragmentationChoice> choice =
      options.whole_gpus_by_bucket && request.shape.whole_gpus() > 0
          ? ChooseWholeGpusByBucket(capacity, request, model)
          : ChooseByFragmentation(capacity, request, model);
  if (!choice) return std::nullopt;
  Placement placement;
  placement.shape = request.shape;
  if (request.shape.whole_gpus() > 0) {
    AddTasksOnNode(capacity, choice->node, 1, placement);
  } else if (request.shape.wants_share()) {
    placement.tasks.push_back(TaskPlacement{choice->node, GpuMask{1} << choice->share_device});
  } else {
    placement.tasks.push_back(TaskPlacement{choice->node, 0});
  }
  return placement;
}

}  // namespace

std::optional<Placement> Place(const Capacity& capacity, const PlacementRequest& request,
                               const PlaceOptions& options) {
  BERTH_CHECK(request.tasks >= 1 && request.shape.valid());
  if (request.task_shapes) return PlaceUnevenGang(capacity, request);
  if (options.fragmentation != nullptr && request.tasks == 1) {
    // The index says at once when a whole-GPU task fits nowhere; the
    // fragmentation rule would scan every node to find that out.
    if (request.shape.whole_gpus() > 0 && !PlaceWholeGpus(capacity, request)) return std::nullopt;
    return PlaceByFragmentation(capacity, request, options);
  }
  if (request.shape.whole_gpus() > 0) return PlaceWholeGpus(capacity, request);
  return PlaceByScan(capacity, request);
}

bool FitsEmptyCluster(const NodeTable& nodes, const PlacementRequest& request) {
  // Per model, since a gang never mixes models. Stops at the first model
  // with room for every task: for most requests the first node that fits
  // one task, where walking every node cost each event cycle a pass over
  // the cluster per distinct request (7% of `Decide` at 10k nodes).
  if (request.task_shapes) {
    for (GpuTypeId type : CandidateTypes(nodes, request)) {
      if (AssignUnevenTasks(nodes, request, type,
                            [&](NodeId node) { return EmptyNode(nodes, node); })) {
        return true;
      }
    }
    return false;
  }
  std::vector<int64_t> by_type(nodes.type_count(), 0);
  for (size_t n = 0; n < nodes.size(); ++n) {
    const NodeId node = static_cast<NodeId>(n);
    const int64_t fit = FitOn(EmptyNode(nodes, node), request).tasks;
    if ((by_type[Index(nodes.type_of(node))] += fit) >= request.tasks) return true;
  }
  return false;
}

ReasonCode BlockedReason(const NodeTally& tally, const PlacementRequest& request) {
  const int64_t eligible_but_unavailable =
      tally.rejected_by(NodeRejection::kDown) + tally.rejected_by(NodeRejection::kDraining);
  int64_t static_rejections = 0;
  for (NodeRejection rejection :
       {NodeRejection::kGpuModel, NodeRejection::kNodeList, NodeRejection::kExcluded,
        NodeRejection::kFeatures, NodeRejection::kContainerRuntime}) {
    static_rejections += tally.rejected_by(rejection);
  }
  // Down and draining nodes are counted before the static filters, so some
  // of them may not be eligible at all: unavailable means that no node is
  // both up and eligible.
  if (tally.nodes - eligible_but_unavailable - static_rejections <= 0) {
    return ReasonCode::kNodesUnavailable;
  }
  // A gang on distinct nodes waits for enough nodes with room, not for
  // its GPUs to come together on fewer of them.
  if (request.shape.whole_gpus() == 0 || request.spread == NodeSpread::kDistinctNodes) {
    return ReasonCode::kResources;
  }
  return tally.free_gpus >= request.TotalWholeGpus() ? ReasonCode::kFragmentation
                                                     : ReasonCode::kResources;
}

ReasonCode BlockedReason(const Capacity& capacity, const PlacementRequest& request) {
  if (request.eligibility != nullptr || request.locality != GpuLocality::kAny ||
      request.spread != NodeSpread::kAny) {
    return BlockedReason(TallyNow(capacity, request), request);
  }
  // Up nodes of the request's models, and the free GPUs of the model with
  // the most: what the tally would count, from the index.
  int64_t up = 0;
  int64_t free = 0;
  for (GpuTypeId type : CandidateTypes(capacity.nodes(), request)) {
    up += capacity.schedulable_nodes_of_type(type);
    free = std::max(free, capacity.free_gpus_of_type(type));
  }
  if (up == 0) return ReasonCode::kNodesUnavailable;
  if (request.shape.whole_gpus() == 0) return ReasonCode::kResources;
  return free >= request.TotalWholeGpus() ? ReasonCode::kFragmentation : ReasonCode::kResources;
}

PlacementOutcome PlaceOrExplain(const Capacity& capacity, const PlacementRequest& request,
                                const PlaceOptions& options) {
  if (std::optional<Placement> placement = Place(capacity, request, options)) {
    return Placed{std::move(*placement)};
  }
  if (!FitsEmptyCluster(capacity.nodes(), request)) {
    return Infeasible{TallyEver(capacity.nodes(), request)};
  }
  NodeTally tally = TallyNow(capacity, request);
  const ReasonCode reason = BlockedReason(tally, request);
  return Blocked{reason, std::move(tally)};
}

}  // namespace berth::core
