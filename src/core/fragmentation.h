// Fragmentation-aware placement: Fragmentation Gradient Descent (FGD, Weng et
// al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with
// Fragmentation Gradient Descent", USENIX ATC'23).
//
// Best fit looks at one task; FGD looks at the tasks that will come next. A
// FragmentationModel holds a target workload (task shapes with weights, e.g.
// how often each shape occurs in a trace) and measures a node's
// fragmentation against it: the free GPU capacity on the node that a task
// drawn from the workload could not use. For a node n and a shape m asking
// for `devices` GPUs of at least `per_device` free thousandths each
// (per_device = 1000 for whole GPUs, the share for a GPU share):
//
//   frag(n, m) = all free GPU thousandths on n   when m cannot run on n at all
//                                                (other model, too little CPU
//                                                or memory, fewer than
//                                                `devices` devices with
//                                                per_device free) or m asks
//                                                for no GPU;
//              = the free thousandths of the devices with less than
//                per_device free                 otherwise.
//   F(n)       = sum over shapes m of weight(m) * frag(n, m).
//
// The placement rule (ChooseByFragmentation) places a task where F grows
// least: among the feasible (node, device) choices, the smallest F(after) -
// F(before) on the chosen node; ties go to the best-fit rule of placer.h (the
// fewest free GPUs for whole-GPU tasks, the least share left on the device
// for shares, the least CPU left for CPU-only tasks), then to the lowest node
// id and the lowest device index. Every quantity is an integer (milli-GPU x
// weight), so comparisons are exact and the rule is deterministic.
//
// Differences from the FGD paper's simulator, on purpose: memory is checked
// beside CPU when deciding whether a shape can run on a node (the core
// places memory too); the workload is every shape given rather than only
// the most popular ones (the paper's "typical pods"); scores are exact
// integers rather than a sigmoid mapped to 0..100; and a gang (tasks > 1) is
// not scored here (Place keeps the best-fit gang rule: fewest nodes first).
//
// Stateless after construction; const methods are safe to call from several
// threads.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/capacity.h"
#include "core/ids.h"
#include "core/node.h"
#include "core/node_table.h"
#include "core/placer.h"
#include "core/resources.h"

namespace berth::core {

// One kind of task in the target workload and how often it appears.
struct WorkloadShape {
  TaskShape shape;  // one task
  // nullopt: any GPU model.
  std::optional<GpuTypeId> type;
  // Popularity, e.g. the number of such tasks in a trace; 0 is allowed and
  // means the shape plays no part.
  int64_t weight = 1;
};

class FragmentationModel {
 public:
  // REQUIRES: every shape is valid, every weight >= 0 and their sum is at
  // most kMaxTotalWeight (so that scores fit in 64 bits).
  explicit FragmentationModel(const std::vector<WorkloadShape>& workload);

  static constexpr int64_t kMaxTotalWeight = int64_t{1} << 36;

  // The sum of the workload's weights; F divided by it is the expected
  // number of milli-GPUs a random task of the workload could not use.
  int64_t total_weight() const { return total_weight_; }

  // F(node) on the capacity's current free resources, in milli-GPU x weight.
  // A node that is not schedulable offers nothing, so its F is 0.
  int64_t NodeFragmentation(const Capacity& capacity, NodeId node) const;
  // The sum of F over all nodes.
  int64_t ClusterFragmentation(const Capacity& capacity) const;

  // A node's free resources as the model sees them. Public so that the
  // placement rule can score hypothetical states; not a general interface.
  struct NodeView {
    GpuTypeId type{};
    int64_t cpu = 0;
    int64_t memory = 0;
    int gpu_count = 0;
    // Free thousandths of each device, ascending; only the first gpu_count
    // entries are meaningful. A fixed array: views are built per candidate
    // on the placement path, so they must not allocate.
    std::array<int64_t, kMaxGpusPerNode> free_milli{};
  };
  static NodeView ViewOf(const Capacity& capacity, NodeId node);
  int64_t Fragmentation(const NodeView& view) const;

 private:
  // CPU and memory one shape needs, and its weight.
  struct HostNeed {
    int64_t cpu = 0;
    int64_t memory = 0;
    int64_t weight = 0;
  };
  // Shapes with the same GPU demand and model, which differ only in CPU and
  // memory: they share the device scan.
  struct GpuDemand {
    int64_t per_device = 0;  // free thousandths a device needs
    int devices = 0;
    std::optional<GpuTypeId> type;
    int64_t weight = 0;  // of all its needs
    int64_t max_cpu = 0;
    int64_t max_memory = 0;
    std::vector<HostNeed> needs;  // ascending CPU, then memory
  };
  // Weight of the demand's shapes whose CPU and memory fit the view.
  static int64_t HostableWeight(const GpuDemand& demand, const NodeView& view);

  std::vector<GpuDemand> demands_;  // ascending per_device, then devices, then model
  int64_t gpu_free_weight_ = 0;     // shapes asking for no GPU
  int64_t total_weight_ = 0;
};

// The fragmentation-aware choice for one task: the node and, for a GPU
// share, the device. Whole-GPU tasks leave the devices to Place (the
// interconnect rule of placer.h); CPU-only tasks have none.
struct FragmentationChoice {
  NodeId node{};
  int share_device = -1;  // a share's device index; -1 otherwise
};

// The rule described above, or nullopt when the task fits no node now.
// REQUIRES: request.tasks == 1 and request.shape.valid().
std::optional<FragmentationChoice> ChooseByFragmentation(const Capacity& capacity,
                                                         const PlacementRequest& request,
                                                         const FragmentationModel& model);

// The rule for a whole-GPU task with one node scored per (model, whole free
// GPUs) bucket of the capacity's index: the bucket's first node, in id
// order, with the CPU and memory the task asks for; ties go to the fewest
// free GPUs, then the lowest node id. The same choice as
// ChooseByFragmentation when the nodes of a bucket look alike to the model
// (no GPU shares in use, CPU and memory that decide no shape's fit), as on
// whole-GPU training clusters; O(models x GPUs per node) rather than
// O(nodes), which live decisions on large clusters need.
// REQUIRES: request.tasks == 1 and request.shape.whole_gpus() > 0.
std::optional<FragmentationChoice> ChooseWholeGpusByBucket(const Capacity& capacity,
                                                           const PlacementRequest& request,
                                                           const FragmentationModel& model);

}  // namespace berth::core
