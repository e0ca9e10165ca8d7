// Capacity: what every node has free right now, with an index for best-fit.
//
// This is the one mutable resource ledger of the core. ClusterState owns the
// live one; a decision cycle copies it into tentative overlays (cheap: flat
// arrays and bitsets, no per-node allocation) and commits or discards them.
//
// Invariants (checked): a GPU's used thousandths stay in 0..1000, a whole-GPU
// task only takes devices with nothing on them, and CPU/memory never go below
// zero except through Reserve(), which models "promised to a reservation".
//
// Not thread-safe; copies are independent.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/ids.h"
#include "core/node_table.h"
#include "core/placement.h"
#include "core/resources.h"

namespace berth::core {

class Capacity {
 public:
  // `nodes` must outlive this Capacity and every copy of it.
  explicit Capacity(const NodeTable* nodes);

  // Brings the ledger up to date after nodes were added to the table.
  void SyncNodes();
  // Points the ledger at `nodes`, a copy of the table it follows (the same
  // nodes), which must outlive it: a copy of the ledger can then be used
  // apart from the original table (eta_plan.h).
  void Rebind(const NodeTable* nodes);

  // Administrative and health changes. A node that is not up keeps its
  // allocations (running work continues) but offers nothing new.
  void SetNodeState(NodeId node, NodeState state);
  void SetGpuUsable(NodeId node, int gpu, bool usable);

  // REQUIRES: CanAllocate(placement).
  void Allocate(const Placement& placement);
  // REQUIRES: the placement was allocated before.
  void Release(const Placement& placement);
  // Promises the placement's devices and CPU/memory to a future start: they
  // stop being offered, whether or not they are free now. Used by the
  // backfill overlay, never on the live ledger.
  void Reserve(const Placement& placement);
  bool CanAllocate(const Placement& placement) const;

  const NodeTable& nodes() const { return *nodes_; }
  size_t node_count() const { return use_.size(); }
  NodeState state(NodeId node) const { return use_[Index(node)].state; }
  bool schedulable(NodeId node) const { return state(node) == NodeState::kUp; }
  // Devices that are usable and hold nothing.
  GpuMask free_gpus(NodeId node) const { return use_[Index(node)].free; }
  int free_gpu_count(NodeId node) const { return CountGpus(use_[Index(node)].free); }
  // Thousandths still free on one usable device (0 when unusable).
  int64_t free_milli(NodeId node, int gpu) const;
  MilliCpu free_cpu(NodeId node) const { return use_[Index(node)].cpu_free; }
  MemoryMiB free_memory(NodeId node) const { return use_[Index(node)].memory_free; }
  // Whole free GPUs on schedulable nodes of a model.
  int64_t free_gpus_of_type(GpuTypeId type) const { return free_by_type_[Index(type)]; }
  // Schedulable nodes of a model.
  int64_t schedulable_nodes_of_type(GpuTypeId type) const {
    return schedulable_by_type_[Index(type)];
  }

  // Calls fn(node) for schedulable nodes of `type` with exactly `free_count`
  // whole free GPUs, in ascending node order, until fn returns true. Returns
  // whether fn returned true.
  template <typename Fn>
  bool ForEachWithFree(GpuTypeId type, int free_count, Fn&& fn) const {
    const uint64_t* words = &bucket_bits_[BucketOffset(type, free_count)];
    for (size_t w = 0; w < words_per_bucket_; ++w) {
      uint64_t bits = words[w];
      while (bits != 0) {
        const int bit = std::countr_zero(bits);
        bits &= bits - 1;
        if (fn(static_cast<NodeId>(w * 64 + static_cast<size_t>(bit)))) return true;
      }
    }
    return false;
  }
  bool AnyWithFree(GpuTypeId type, int free_count) const;

 private:
  struct NodeUse {
    std::array<uint16_t, kMaxGpusPerNode> used_milli{};
    GpuMask usable = 0;  // healthy and not promised to a reservation
    GpuMask free = 0;    // usable, schedulable and holding nothing
    MilliCpu cpu_free;
    MemoryMiB memory_free;
    NodeState state = NodeState::kUp;
    bool schedulable() const { return state == NodeState::kUp; }
  };

  size_t BucketOffset(GpuTypeId type, int free_count) const {
    return (Index(type) * bucket_span_ + static_cast<size_t>(free_count)) * words_per_bucket_;
  }
  // Recomputes node's free mask and moves it between index buckets.
  void Refresh(NodeId node);
  void RebuildIndex();
  void SetBit(NodeId node, int free_count, bool on);

  const NodeTable* nodes_;
  std::vector<NodeUse> use_;
  // Index: one bitset over nodes per (GPU model, free whole GPU count).
  std::vector<uint64_t> bucket_bits_;
  std::vector<int> indexed_count_;  // per node: the bucket it is in, -1 if none
  std::vector<int64_t> free_by_type_;
  std::vector<int64_t> schedulable_by_type_;
  size_t bucket_span_ = 1;
  size_t words_per_bucket_ = 0;
};

}  // namespace berth::core
