#include "core/fragmentation.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "common/check.h"

namespace berth::core {
namespace {

// Sort key of a GPU demand: per-device need, device count, model (-1: any).
using DemandKey = std::tuple<int64_t, int, int64_t>;

void SortFree(FragmentationModel::NodeView& view) {
  std::sort(view.free_milli.begin(), view.free_milli.begin() + view.gpu_count);
}

// Replaces one device's free thousandths `from` by `to` in a sorted view.
void ChangeDevice(FragmentationModel::NodeView& view, int64_t from, int64_t to) {
  auto end = view.free_milli.begin() + view.gpu_count;
  auto it = std::lower_bound(view.free_milli.begin(), end, from);
  BERTH_CHECK(it != end && *it == from) << "no device with " << from << " free";
  *it = to;
  SortFree(view);
}

// A candidate of the rule: lexicographically smaller is better. Nodes and
// devices are visited in ascending order and only a strictly better
// candidate replaces the best, so the last two tie-breaks (lowest node id,
// lowest device index) need no fields.
struct Score {
  int64_t increase = 0;  // F(after) - F(before) on the node
  int64_t best_fit = 0;  // the best-fit rule's remainder: smaller is tighter
  bool operator<(const Score& other) const {
    return std::tie(increase, best_fit) < std::tie(other.increase, other.best_fit);
  }
};

uint64_t Mix(uint64_t hash, uint64_t value) {
  // splitmix64's finalizer over a running combination: cheap and well spread.
  uint64_t z = hash ^ (value + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t HashOf(const FragmentationModel::NodeView& view) {
  uint64_t hash = Mix(Index(view.type), static_cast<uint64_t>(view.cpu));
  hash = Mix(hash, static_cast<uint64_t>(view.memory));
  for (int g = 0; g < view.gpu_count; ++g) {
    hash = Mix(hash, static_cast<uint64_t>(view.free_milli[static_cast<size_t>(g)]));
  }
  return Mix(hash, static_cast<uint64_t>(view.gpu_count));
}

bool SameState(const FragmentationModel::NodeView& a, const FragmentationModel::NodeView& b) {
  return a.type == b.type && a.cpu == b.cpu && a.memory == b.memory && a.gpu_count == b.gpu_count &&
         std::equal(a.free_milli.begin(), a.free_milli.begin() + a.gpu_count, b.free_milli.begin());
}

// The node states already scored in one placement. A node in the same state
// as a lower-numbered one scores the same and loses the node-id tie-break,
// so it need not be scored: on a fresh cluster most nodes are alike. An
// open-addressing table of (hash, first node), one allocation per call.
class SeenStates {
 public:
  explicit SeenStates(size_t nodes) {
    size_t size = 16;
    while (size < 2 * nodes) size *= 2;
    slots_.assign(size, Slot{});
  }

  // Whether an earlier node had exactly this state; records it otherwise.
  // A hash collision between different states only costs a rescoring.
  bool SeenBefore(const Capacity& capacity, NodeId node, const FragmentationModel::NodeView& view) {
    const uint64_t hash = HashOf(view);
    const size_t mask = slots_.size() - 1;
    for (size_t i = static_cast<size_t>(hash) & mask;; i = (i + 1) & mask) {
      Slot& slot = slots_[i];
      if (slot.node < 0) {
        slot = Slot{hash, Value(node)};
        return false;
      }
      if (slot.hash == hash) {
        return SameState(FragmentationModel::ViewOf(capacity, static_cast<NodeId>(slot.node)),
                         view);
      }
    }
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    int32_t node = -1;
  };
  std::vector<Slot> slots_;
};

}  // namespace

FragmentationModel::FragmentationModel(const std::vector<WorkloadShape>& workload) {
  // Ordered maps keep the demands in a deterministic order whatever the
  // order of the workload.
  std::map<DemandKey, std::map<std::pair<int64_t, int64_t>, int64_t>> grouped;
  for (const WorkloadShape& item : workload) {
    BERTH_CHECK(item.shape.valid()) << "invalid workload shape";
    BERTH_CHECK(item.weight >= 0) << "negative weight " << item.weight;
    total_weight_ += item.weight;
    BERTH_CHECK(total_weight_ <= kMaxTotalWeight) << "total weight over " << kMaxTotalWeight;
    if (item.weight == 0) continue;
    if (item.shape.gpu.value() == 0) {
      gpu_free_weight_ += item.weight;
      continue;
    }
    const bool share = item.shape.wants_share();
    const DemandKey key{share ? item.shape.gpu.value() : 1000, share ? 1 : item.shape.whole_gpus(),
                        item.type ? static_cast<int64_t>(Index(*item.type)) : -1};
    grouped[key][{item.shape.cpu.value(), item.shape.memory.value()}] += item.weight;
  }
  for (const auto& [key, needs] : grouped) {
    GpuDemand demand;
    demand.per_device = std::get<0>(key);
    demand.devices = std::get<1>(key);
    if (std::get<2>(key) >= 0) demand.type = static_cast<GpuTypeId>(std::get<2>(key));
    for (const auto& [host, weight] : needs) {
      demand.needs.push_back(HostNeed{host.first, host.second, weight});
      demand.weight += weight;
      demand.max_cpu = std::max(demand.max_cpu, host.first);
      demand.max_memory = std::max(demand.max_memory, host.second);
    }
    demands_.push_back(std::move(demand));
  }
}

FragmentationModel::NodeView FragmentationModel::ViewOf(const Capacity& capacity, NodeId node) {
  NodeView view;
  view.type = capacity.nodes().type_of(node);
  view.cpu = capacity.free_cpu(node).value();
  view.memory = capacity.free_memory(node).value();
  view.gpu_count = static_cast<int>(capacity.nodes().spec(node).gpus.size());
  for (int g = 0; g < view.gpu_count; ++g) {
    view.free_milli[static_cast<size_t>(g)] = capacity.free_milli(node, g);
  }
  SortFree(view);
  return view;
}

int64_t FragmentationModel::HostableWeight(const GpuDemand& demand, const NodeView& view) {
  if (view.cpu >= demand.max_cpu && view.memory >= demand.max_memory) return demand.weight;
  int64_t weight = 0;
  for (const HostNeed& need : demand.needs) {
    if (need.cpu > view.cpu) break;  // needs ascend by CPU
    if (need.memory <= view.memory) weight += need.weight;
  }
  return weight;
}

int64_t FragmentationModel::Fragmentation(const NodeView& view) const {
  int64_t total = 0;
  for (int g = 0; g < view.gpu_count; ++g) total += view.free_milli[static_cast<size_t>(g)];
  // Every term below is a weight times at most `total`.
  if (total == 0) return 0;

  // Shapes that ask for no GPU can use none of the free GPU capacity.
  int64_t fragmentation = gpu_free_weight_ * total;
  // Demands come in ascending per-device need, so one sweep over the sorted
  // devices splits them into "too little free" (below) and usable ones.
  int below_count = 0;
  int64_t below = 0;
  for (const GpuDemand& demand : demands_) {
    while (below_count < view.gpu_count &&
           view.free_milli[static_cast<size_t>(below_count)] < demand.per_device) {
      below += view.free_milli[static_cast<size_t>(below_count++)];
    }
    const int usable = view.gpu_count - below_count;
    if ((demand.type && *demand.type != view.type) || usable < demand.devices) {
      fragmentation += demand.weight * total;
      continue;
    }
    const int64_t hostable = HostableWeight(demand, view);
    fragmentation += hostable * below + (demand.weight - hostable) * total;
  }
  return fragmentation;
}

int64_t FragmentationModel::NodeFragmentation(const Capacity& capacity, NodeId node) const {
  return Fragmentation(ViewOf(capacity, node));
}

int64_t FragmentationModel::ClusterFragmentation(const Capacity& capacity) const {
  int64_t sum = 0;
  for (size_t n = 0; n < capacity.node_count(); ++n) {
    sum += NodeFragmentation(capacity, static_cast<NodeId>(n));
  }
  return sum;
}

namespace {

// F(after) - F(before) of a whole-GPU task on `node`: it takes the largest
// free entries (1000 each) of the view.
int64_t WholeGpuIncrease(const FragmentationModel& model, FragmentationModel::NodeView view,
                         const TaskShape& shape) {
  const int64_t before = model.Fragmentation(view);
  view.cpu -= shape.cpu.value();
  view.memory -= shape.memory.value();
  for (int i = 0; i < shape.whole_gpus(); ++i) {
    view.free_milli[static_cast<size_t>(view.gpu_count - 1 - i)] = 0;
  }
  SortFree(view);
  return model.Fragmentation(view) - before;
}

}  // namespace

std::optional<FragmentationChoice> ChooseWholeGpusByBucket(const Capacity& capacity,
                                                           const PlacementRequest& request,
                                                           const FragmentationModel& model) {
  BERTH_CHECK(request.tasks == 1 && request.shape.whole_gpus() > 0);
  const TaskShape& shape = request.shape;
  const NodeTable& nodes = capacity.nodes();
  std::optional<FragmentationChoice> best;
  std::tuple<Score, NodeId> best_key;
  for (size_t t = 0; t < nodes.type_count(); ++t) {
    const auto type = static_cast<GpuTypeId>(t);
    if (request.type && type != *request.type) continue;
    for (int free = shape.whole_gpus(); free <= nodes.max_gpus(type); ++free) {
      capacity.ForEachWithFree(type, free, [&](NodeId node) {
        // The bucket has the GPUs; the rest of the pipeline (constraints,
        // CPU, memory) may still rule the node out.
        if (TasksThatFit(capacity, node, request) < 1) {
          return false;  // the bucket's next node may have the room
        }
        const Score score{
            WholeGpuIncrease(model, FragmentationModel::ViewOf(capacity, node), shape), free};
        if (!best || std::tie(score, node) < best_key) {
          best = FragmentationChoice{node, -1};
          best_key = {score, node};
        }
        return true;
      });
    }
  }
  return best;
}

std::optional<FragmentationChoice> ChooseByFragmentation(const Capacity& capacity,
                                                         const PlacementRequest& request,
                                                         const FragmentationModel& model) {
  BERTH_CHECK(request.tasks == 1 && request.shape.valid());
  const TaskShape& shape = request.shape;
  const int whole = shape.whole_gpus();
  const bool share = shape.wants_share();
  const int64_t want = shape.gpu.value();

  std::optional<FragmentationChoice> best;
  Score best_score;
  auto offer = [&](const Score& score, NodeId node, int device) {
    if (!best || score < best_score) {
      best = FragmentationChoice{node, device};
      best_score = score;
    }
  };

  SeenStates seen_states(capacity.node_count());
  for (size_t n = 0; n < capacity.node_count(); ++n) {
    const NodeId node = static_cast<NodeId>(n);
    if (TasksThatFit(capacity, node, request) < 1) continue;

    FragmentationModel::NodeView view = FragmentationModel::ViewOf(capacity, node);
    if (seen_states.SeenBefore(capacity, node, view)) continue;
    if (whole > 0) {
      offer(Score{WholeGpuIncrease(model, view, shape), capacity.free_gpu_count(node)}, node, -1);
      continue;
    }
    const int64_t before = model.Fragmentation(view);
    view.cpu -= shape.cpu.value();
    view.memory -= shape.memory.value();
    if (share) {
      // Devices with equal free thousandths lead to the same state, so only
      // the lowest-indexed one of each is scored.
      std::array<int64_t, kMaxGpusPerNode> seen{};
      size_t seen_count = 0;
      for (int g = 0; g < view.gpu_count; ++g) {
        const int64_t free = capacity.free_milli(node, g);
        if (free < want) continue;
        if (std::find(seen.begin(), seen.begin() + static_cast<std::ptrdiff_t>(seen_count), free) !=
            seen.begin() + static_cast<std::ptrdiff_t>(seen_count)) {
          continue;
        }
        seen[seen_count++] = free;
        FragmentationModel::NodeView after = view;
        ChangeDevice(after, free, free - want);
        offer(Score{model.Fragmentation(after) - before, free - want}, node, g);
      }
    } else {
      offer(Score{model.Fragmentation(view) - before, view.cpu}, node, -1);
    }
  }
  return best;
}

}  // namespace berth::core
