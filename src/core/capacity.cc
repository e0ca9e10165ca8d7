#include "core/capacity.h"

#include <algorithm>
#include <bit>

#include "common/check.h"

namespace berth::core {
namespace {

GpuMask AllDevices(size_t count) { return count >= 64 ? ~GpuMask{0} : ((GpuMask{1} << count) - 1); }

}  // namespace

Capacity::Capacity(const NodeTable* nodes) : nodes_(nodes) { SyncNodes(); }

void Capacity::Rebind(const NodeTable* nodes) {
  BERTH_CHECK(nodes->size() == use_.size()) << "a table of other nodes";
  nodes_ = nodes;
}

void Capacity::SyncNodes() {
  const size_t old_size = use_.size();
  use_.resize(nodes_->size());
  for (size_t i = old_size; i < use_.size(); ++i) {
    const NodeSpec& spec = nodes_->spec(static_cast<NodeId>(i));
    NodeUse& use = use_[i];
    for (const GpuDevice& gpu : spec.gpus) {
      if (gpu.health == GpuHealth::kHealthy) use.usable |= GpuMask{1} << gpu.index;
    }
    use.cpu_free = spec.cpu;
    use.memory_free = spec.memory;
  }
  RebuildIndex();
}

void Capacity::RebuildIndex() {
  bucket_span_ = static_cast<size_t>(nodes_->max_gpus_any()) + 1;
  words_per_bucket_ = (use_.size() + 63) / 64;
  bucket_bits_.assign(nodes_->type_count() * bucket_span_ * words_per_bucket_, 0);
  free_by_type_.assign(nodes_->type_count(), 0);
  schedulable_by_type_.assign(nodes_->type_count(), 0);
  indexed_count_.assign(use_.size(), -1);
  for (size_t i = 0; i < use_.size(); ++i) Refresh(static_cast<NodeId>(i));
}

void Capacity::SetBit(NodeId node, int free_count, bool on) {
  const size_t offset = BucketOffset(nodes_->type_of(node), free_count) + Index(node) / 64;
  const uint64_t bit = uint64_t{1} << (Index(node) % 64);
  if (on) {
    bucket_bits_[offset] |= bit;
  } else {
    bucket_bits_[offset] &= ~bit;
  }
}

void Capacity::Refresh(NodeId node) {
  NodeUse& use = use_[Index(node)];
  GpuMask unused = 0;
  const size_t gpu_count = nodes_->spec(node).gpus.size();
  for (size_t g = 0; g < gpu_count; ++g) {
    if (use.used_milli[g] == 0) unused |= GpuMask{1} << g;
  }
  use.free = use.schedulable() ? (use.usable & unused & AllDevices(gpu_count)) : 0;

  const int count = use.schedulable() ? CountGpus(use.free) : -1;
  int& indexed = indexed_count_[Index(node)];
  if (indexed == count) return;
  const GpuTypeId type = nodes_->type_of(node);
  if (indexed >= 0) {
    SetBit(node, indexed, false);
    free_by_type_[Index(type)] -= indexed;
    --schedulable_by_type_[Index(type)];
  }
  if (count >= 0) {
    SetBit(node, count, true);
    free_by_type_[Index(type)] += count;
    ++schedulable_by_type_[Index(type)];
  }
  indexed = count;
}

void Capacity::SetNodeState(NodeId node, NodeState state) {
  use_[Index(node)].state = state;
  Refresh(node);
}

void Capacity::SetGpuUsable(NodeId node, int gpu, bool usable) {
  BERTH_CHECK(gpu >= 0 && static_cast<size_t>(gpu) < nodes_->spec(node).gpus.size()) << gpu;
  GpuMask& mask = use_[Index(node)].usable;
  if (usable) {
    mask |= GpuMask{1} << gpu;
  } else {
    mask &= ~(GpuMask{1} << gpu);
  }
  Refresh(node);
}

int64_t Capacity::free_milli(NodeId node, int gpu) const {
  const NodeUse& use = use_[Index(node)];
  if (!use.schedulable() || (use.usable & (GpuMask{1} << gpu)) == 0) return 0;
  return 1000 - use.used_milli[static_cast<size_t>(gpu)];
}

bool Capacity::CanAllocate(const Placement& placement) const {
  // Tasks of one job may share a node, so check cumulative demand per node.
  for (size_t i = 0; i < placement.tasks.size(); ++i) {
    const TaskPlacement& task = placement.tasks[i];
    if (Index(task.node) >= use_.size()) return false;
    const NodeUse& use = use_[Index(task.node)];
    if (!use.schedulable()) return false;
    int64_t cpu = 0;
    int64_t memory = 0;
    GpuMask whole = 0;
    int64_t share_on_device[kMaxGpusPerNode] = {};
    for (size_t j = 0; j < placement.tasks.size(); ++j) {
      const TaskPlacement& other = placement.tasks[j];
      if (other.node != task.node) continue;
      const TaskShape& shape = placement.ShapeOf(j);
      cpu += shape.cpu.value();
      memory += shape.memory.value();
      if (shape.wants_share()) {
        share_on_device[std::countr_zero(other.gpus)] += shape.gpu.value();
      } else {
        if ((whole & other.gpus) != 0) return false;  // two tasks on one device
        whole |= other.gpus;
      }
    }
    if (cpu > use.cpu_free.value() || memory > use.memory_free.value()) return false;
    const TaskShape& shape = placement.ShapeOf(i);
    if (shape.wants_share()) {
      if (CountGpus(task.gpus) != 1) return false;
      const int gpu = std::countr_zero(task.gpus);
      if (share_on_device[gpu] > free_milli(task.node, gpu)) return false;
    } else {
      if (CountGpus(task.gpus) != shape.whole_gpus()) return false;
      if ((whole & ~use.free) != 0) return false;
    }
  }
  return true;
}

void Capacity::Allocate(const Placement& placement) {
  for (size_t i = 0; i < placement.tasks.size(); ++i) {
    const TaskPlacement& task = placement.tasks[i];
    const TaskShape& shape = placement.ShapeOf(i);
    NodeUse& use = use_[Index(task.node)];
    for (GpuMask bits = task.gpus; bits != 0; bits &= bits - 1) {
      const size_t gpu = static_cast<size_t>(std::countr_zero(bits));
      const int add = shape.wants_share() ? static_cast<int>(shape.gpu.value()) : 1000;
      BERTH_CHECK(use.used_milli[gpu] + add <= 1000)
          << "node " << Value(task.node) << " gpu " << gpu << " over-allocated";
      use.used_milli[gpu] = static_cast<uint16_t>(use.used_milli[gpu] + add);
    }
    use.cpu_free -= shape.cpu;
    use.memory_free -= shape.memory;
    BERTH_CHECK(use.cpu_free.value() >= 0 && use.memory_free.value() >= 0)
        << "node " << Value(task.node) << " CPU or memory over-allocated";
    Refresh(task.node);
  }
}

void Capacity::Release(const Placement& placement) {
  for (size_t i = 0; i < placement.tasks.size(); ++i) {
    const TaskPlacement& task = placement.tasks[i];
    const TaskShape& shape = placement.ShapeOf(i);
    NodeUse& use = use_[Index(task.node)];
    for (GpuMask bits = task.gpus; bits != 0; bits &= bits - 1) {
      const size_t gpu = static_cast<size_t>(std::countr_zero(bits));
      const int sub = shape.wants_share() ? static_cast<int>(shape.gpu.value()) : 1000;
      BERTH_CHECK(use.used_milli[gpu] >= sub)
          << "node " << Value(task.node) << " gpu " << gpu << " released twice";
      use.used_milli[gpu] = static_cast<uint16_t>(use.used_milli[gpu] - sub);
    }
    use.cpu_free += shape.cpu;
    use.memory_free += shape.memory;
    Refresh(task.node);
  }
}

void Capacity::Reserve(const Placement& placement) {
  for (size_t i = 0; i < placement.tasks.size(); ++i) {
    const TaskPlacement& task = placement.tasks[i];
    const TaskShape& shape = placement.ShapeOf(i);
    NodeUse& use = use_[Index(task.node)];
    use.usable &= ~task.gpus;
    use.cpu_free = MilliCpu(std::max<int64_t>(0, (use.cpu_free - shape.cpu).value()));
    use.memory_free = MemoryMiB(std::max<int64_t>(0, (use.memory_free - shape.memory).value()));
    Refresh(task.node);
  }
}

bool Capacity::AnyWithFree(GpuTypeId type, int free_count) const {
  const uint64_t* words = &bucket_bits_[BucketOffset(type, free_count)];
  for (size_t w = 0; w < words_per_bucket_; ++w) {
    if (words[w] != 0) return true;
  }
  return false;
}

}  // namespace berth::core
