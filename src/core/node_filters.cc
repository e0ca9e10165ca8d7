#include "core/node_filters.h"

#include <bit>
#include <map>

namespace berth::core {
namespace {

template <typename View, typename MakeView>
NodeTally Tally(const NodeTable& nodes, const PlacementRequest& request, MakeView make_view) {
  NodeTally tally;
  tally.nodes = static_cast<int64_t>(nodes.size());
  if (request.eligibility != nullptr) tally.constraint_error = request.eligibility->error;
  std::vector<int64_t> tasks_by_model(nodes.type_count(), 0);
  std::vector<int64_t> free_by_model(nodes.type_count(), 0);
  std::map<std::string, int64_t> other_models;
  for (size_t n = 0; n < nodes.size(); ++n) {
    const View node = make_view(static_cast<NodeId>(n));
    const NodeFit fit = FitOn(node, request);
    if (fit.rejected) {
      ++tally.rejected[static_cast<size_t>(*fit.rejected)];
      if (*fit.rejected == NodeRejection::kGpuModel) ++other_models[nodes.spec(node.id()).gpu_type];
    } else {
      ++tally.fit;
      tasks_by_model[Index(nodes.type_of(node.id()))] += fit.tasks;
    }
    const bool past_static = !fit.rejected || *fit.rejected >= NodeRejection::kGpus;
    if (!past_static) continue;
    tally.largest_gpus = std::max<int64_t>(tally.largest_gpus, node.free_gpus());
    tally.largest_cpu = std::max(tally.largest_cpu, node.cpu());
    tally.largest_memory = std::max(tally.largest_memory, node.memory());
    free_by_model[Index(nodes.type_of(node.id()))] += node.free_gpus();
  }
  for (size_t t = 0; t < nodes.type_count(); ++t) {
    tally.tasks = std::max(tally.tasks, std::min(tasks_by_model[t], kAnyTasks));
    tally.free_gpus = std::max(tally.free_gpus, free_by_model[t]);
  }
  tally.other_models.assign(other_models.begin(), other_models.end());
  return tally;
}

}  // namespace

int64_t TasksInOneGroup(const NodeSpec& spec, GpuMask free, int per_task) {
  std::map<int, int> free_in_group;
  for (GpuMask bits = free; bits != 0; bits &= bits - 1) {
    ++free_in_group[spec.gpus[static_cast<size_t>(std::countr_zero(bits))].interconnect_group];
  }
  int64_t tasks = 0;
  for (const auto& [group, count] : free_in_group) tasks += count / per_task;
  return tasks;
}

NodeTally TallyNow(const Capacity& capacity, const PlacementRequest& request) {
  return Tally<LiveNode>(capacity.nodes(), request,
                         [&](NodeId node) { return LiveNode(capacity, node); });
}

NodeTally TallyEver(const NodeTable& nodes, const PlacementRequest& request) {
  return Tally<EmptyNode>(nodes, request, [&](NodeId node) { return EmptyNode(nodes, node); });
}

}  // namespace berth::core
