// The node feasibility pipeline: the one answer to "can node n host tasks of
// this request, and how many?", which every placement path asks (best fit,
// the gang rule, the scan for GPU shares and CPU-only tasks, the
// fragmentation-aware choice, the empty-cluster test, preemption's victim
// search, reservations and ETAs, which place through Place).
//
// An ordered, fixed list of small filters. Each looks at one thing and says
// how many of the request's tasks it lets through on the node; the static
// ones let all or none through:
//
//   1. state        the node is up (not down, not draining)   kDown, kDraining
//   2. GPU model    one of the models the job accepts         kGpuModel
//   3. constraints  nodelist, exclude, feature expression     kNodeList, kExcluded, kFeatures
//                   and a container runtime for a job in an   kContainerRuntime
//                   image
//   4. GPUs         free whole GPUs / devices with room       kGpus
//   5. CPU          free millicores                           kCpu
//   6. memory       free MiB                                  kMemory
//   7. interconnect free GPUs in one interconnect group, when    kInterconnect
//                   the job asks for it (GpuLocality::kOneGroup)
//   8. spread       at most one task per node when the job asks  (never rejects)
//                   for distinct nodes (NodeSpread::kDistinctNodes)
//
// The node hosts the least any filter lets through; the first filter that
// lets none through is the reason (NodeRejection). The order is cheapest
// first and static before dynamic, so a tally says the most lasting reason:
// a draining node with no free GPUs counts as draining.
//
// A filter reads a node through a view: LiveNode (its state and free
// resources on a Capacity) or EmptyNode (up, healthy and empty: what it
// could ever offer, for "can this job ever run here?"). Templates, so that
// the indexed placement paths pay no more than the checks they made before.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/check.h"
#include "core/capacity.h"
#include "core/node_rejection.h"
#include "core/node_table.h"
#include "core/placement_request.h"

namespace berth::core {

// "Any number of tasks": what a filter answers when its resource is not asked for.
inline constexpr int64_t kAnyTasks = int64_t{1} << 30;

// A node as it is now on a capacity.
class LiveNode {
 public:
  LiveNode(const Capacity& capacity, NodeId node) : capacity_(capacity), node_(node) {}
  NodeId id() const { return node_; }
  const NodeTable& table() const { return capacity_.nodes(); }
  NodeState state() const { return capacity_.state(node_); }
  int free_gpus() const { return capacity_.free_gpu_count(node_); }
  // Tasks of `share` thousandths the node's devices have room for.
  int64_t share_slots(int64_t share) const {
    int64_t slots = 0;
    const size_t gpus = capacity_.nodes().spec(node_).gpus.size();
    for (size_t g = 0; g < gpus; ++g)
      slots += capacity_.free_milli(node_, static_cast<int>(g)) / share;
    return slots;
  }
  MilliCpu cpu() const { return capacity_.free_cpu(node_); }
  MemoryMiB memory() const { return capacity_.free_memory(node_); }
  GpuMask free_mask() const { return capacity_.free_gpus(node_); }

 private:
  const Capacity& capacity_;
  NodeId node_;
};

// A node as if it were up, healthy and empty.
class EmptyNode {
 public:
  EmptyNode(const NodeTable& nodes, NodeId node) : nodes_(nodes), node_(node) {}
  NodeId id() const { return node_; }
  const NodeTable& table() const { return nodes_; }
  NodeState state() const { return NodeState::kUp; }
  int free_gpus() const { return static_cast<int>(nodes_.spec(node_).gpus.size()); }
  int64_t share_slots(int64_t share) const { return free_gpus() * (1000 / share); }
  MilliCpu cpu() const { return nodes_.spec(node_).cpu; }
  MemoryMiB memory() const { return nodes_.spec(node_).memory; }
  GpuMask free_mask() const {
    const int count = free_gpus();
    return count >= kMaxGpusPerNode ? ~GpuMask{0} : (GpuMask{1} << count) - 1;
  }

 private:
  const NodeTable& nodes_;
  NodeId node_;
};

// --- the filters, in pipeline order ---

template <typename View>
std::optional<NodeRejection> StateFilter(const View& node) {
  switch (node.state()) {
    case NodeState::kUp:
      return std::nullopt;
    case NodeState::kDraining:
      return NodeRejection::kDraining;
    case NodeState::kDown:
      return NodeRejection::kDown;
  }
  return NodeRejection::kDown;
}

// The GPU model, nodelist, exclude and features filters: fixed for a node
// and a request, decided once per node when the request was resolved
// (NodeEligibility); without constraints only the model index matters.
inline std::optional<NodeRejection> StaticFilters(const NodeTable& nodes, NodeId node,
                                                  const PlacementRequest& request) {
  if (request.type && nodes.type_of(node) != *request.type) return NodeRejection::kGpuModel;
  if (request.eligibility == nullptr) return std::nullopt;
  BERTH_CHECK(Index(node) < request.eligibility->verdict.size())
      << "a request resolved against another node table";
  return request.eligibility->verdict[Index(node)];
}

template <typename View>
int64_t GpuFilter(const View& node, const TaskShape& shape) {
  if (shape.whole_gpus() > 0) return node.free_gpus() / shape.whole_gpus();
  if (shape.wants_share()) return node.share_slots(shape.gpu.value());
  return kAnyTasks;
}

template <typename View>
int64_t CpuFilter(const View& node, const TaskShape& shape) {
  return shape.cpu.value() > 0 ? node.cpu().value() / shape.cpu.value() : kAnyTasks;
}

template <typename View>
int64_t MemoryFilter(const View& node, const TaskShape& shape) {
  return shape.memory.value() > 0 ? node.memory().value() / shape.memory.value() : kAnyTasks;
}

// Tasks whose whole GPUs each fit inside one interconnect group: the sum
// over groups of its free GPUs / GPUs per task. Each task placed takes a
// group that fits it (placer.h), which lowers that group's quotient by one.
int64_t TasksInOneGroup(const NodeSpec& spec, GpuMask free, int per_task);

template <typename View>
int64_t InterconnectFilter(const View& node, const PlacementRequest& request) {
  if (request.locality == GpuLocality::kAny || request.shape.whole_gpus() <= 1) return kAnyTasks;
  return TasksInOneGroup(node.table().spec(node.id()), node.free_mask(),
                         request.shape.whole_gpus());
}

// What the pipeline says of one node: how many tasks it can host, and when
// that is none, the first filter that said so.
struct NodeFit {
  int64_t tasks = 0;
  std::optional<NodeRejection> rejected;
};

template <typename View>
NodeFit FitOn(const View& node, const PlacementRequest& request) {
  if (std::optional<NodeRejection> state = StateFilter(node)) return {0, state};
  if (std::optional<NodeRejection> fixed = StaticFilters(node.table(), node.id(), request)) {
    return {0, fixed};
  }
  const int64_t gpus = GpuFilter(node, request.shape);
  if (gpus <= 0) return {0, NodeRejection::kGpus};
  const int64_t cpu = CpuFilter(node, request.shape);
  if (cpu <= 0) return {0, NodeRejection::kCpu};
  const int64_t memory = MemoryFilter(node, request.shape);
  if (memory <= 0) return {0, NodeRejection::kMemory};
  const int64_t grouped = InterconnectFilter(node, request);
  if (grouped <= 0) return {0, NodeRejection::kInterconnect};
  const int64_t spread = request.spread == NodeSpread::kDistinctNodes ? 1 : kAnyTasks;
  return {std::min({gpus, cpu, memory, grouped, spread}), std::nullopt};
}

// Tasks of the request the node can host now (0: a filter rejects it).
inline int64_t TasksThatFit(const Capacity& capacity, NodeId node,
                            const PlacementRequest& request) {
  return FitOn(LiveNode(capacity, node), request).tasks;
}

// Counts over every node of what the pipeline said, for explanations ("0 of
// 12 nodes can run it: 8 have fewer than 4 free GPUs, 3 have H100-80GB, 1 is
// draining") and for submit-time checks.
struct NodeTally {
  int64_t nodes = 0;
  // Nodes by the first filter that rejected them.
  std::array<int64_t, kNodeRejectionCount> rejected{};
  // Nodes that can host at least one task, and how many tasks the best GPU
  // model's nodes can host together (a gang never mixes models).
  int64_t fit = 0;
  int64_t tasks = 0;
  // Over the nodes that pass the state and static filters: the most free
  // whole GPUs, CPU and memory on one node, and the free whole GPUs of the
  // model with the most (enough in total but not on few enough nodes is
  // fragmentation, not a lack of GPUs).
  int64_t largest_gpus = 0;
  MilliCpu largest_cpu;
  MemoryMiB largest_memory;
  int64_t free_gpus = 0;
  // The models of the nodes the GPU model filter rejected, with how many.
  std::vector<std::pair<std::string, int64_t>> other_models;
  // Why the job's feature expression matches nothing, when it did not parse.
  std::optional<std::string> constraint_error;

  int64_t rejected_by(NodeRejection rejection) const {
    return rejected[static_cast<size_t>(rejection)];
  }
};

// The pipeline over every node on the capacity as it is now.
NodeTally TallyNow(const Capacity& capacity, const PlacementRequest& request);
// The same as if every node were up, healthy and empty.
NodeTally TallyEver(const NodeTable& nodes, const PlacementRequest& request);

}  // namespace berth::core
