#include "sim/packing.h"

#include <optional>
#include <tuple>
#include <utility>

#include "core/capacity.h"
#include "core/fragmentation.h"
#include "core/node_table.h"
#include "core/placement_memo.h"
#include "core/placer.h"

namespace berth::sim {
namespace {

constexpr std::string_view kUnknownModel = "gpu_spec names no node's model";
constexpr std::string_view kFitsNoNode = "larger than any node";

// The requests that can ever be placed, in file order; the rest counted in
// never_fit.
std::vector<core::PlacementRequest> PlaceableRequests(const core::NodeTable& nodes,
                                                      const std::vector<PackTask>& tasks,
                                                      std::map<std::string, int64_t>& never_fit) {
  std::vector<core::PlacementRequest> requests;
  requests.reserve(tasks.size());
  // FitsEmptyCluster scans every node; lists repeat a few shapes many times.
  std::map<std::pair<core::TaskShape, int64_t>, bool> fits_by_shape;
  for (const PackTask& task : tasks) {
    core::PlacementRequest request;
    request.shape = task.shape;
    if (!task.gpu_type.empty()) {
      request.type = nodes.FindType(task.gpu_type);
      if (!request.type) {
        ++never_fit[std::string(kUnknownModel)];
        continue;
      }
    }
    const int64_t type = request.type ? static_cast<int64_t>(core::Index(*request.type)) : -1;
    auto [fits, inserted] = fits_by_shape.try_emplace({request.shape, type}, false);
    if (inserted) fits->second = core::FitsEmptyCluster(nodes, request);
    if (!fits->second) {
      ++never_fit[std::string(kFitsNoNode)];
      continue;
    }
    requests.push_back(request);
  }
  return requests;
}

// The target workload of the fragmentation rule: each distinct (shape,
// model) weighted by how often it occurs. Built in a sorted map, so the
// model does not depend on anything but the list's contents.
core::FragmentationModel WorkloadOf(const std::vector<core::PlacementRequest>& requests) {
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t>;  // gpu, cpu, memory, model (-1 any)
  std::map<Key, int64_t> counts;
  for (const core::PlacementRequest& request : requests) {
    const int64_t type = request.type ? static_cast<int64_t>(core::Index(*request.type)) : -1;
    ++counts[{request.shape.gpu.value(), request.shape.cpu.value(), request.shape.memory.value(),
              type}];
  }
  std::vector<core::WorkloadShape> workload;
  for (const auto& [key, count] : counts) {
    const auto& [gpu, cpu, memory, type] = key;
    core::WorkloadShape shape;
    shape.shape.gpu = core::MilliGpu(gpu);
    shape.shape.cpu = core::MilliCpu(cpu);
    shape.shape.memory = core::MemoryMiB(memory);
    if (type >= 0) shape.type = static_cast<core::GpuTypeId>(type);
    shape.weight = count;
    workload.push_back(shape);
  }
  return core::FragmentationModel(workload);
}

}  // namespace

std::string_view PackRuleName(PackRule rule) {
  switch (rule) {
    case PackRule::kBestFit:
      return "best-fit";
    case PackRule::kBerth:
      return "berth";
  }
  return "unknown";
}

std::string_view PackStopName(PackStop stop) {
  switch (stop) {
    case PackStop::kPassPlacedNothing:
      return "a pass placed nothing";
    case PackStop::kPassLimit:
      return "pass limit";
  }
  return "unknown";
}

PackInput MakePackInput(const std::vector<Pai2023Node>& nodes,
                        const std::vector<Pai2023Pod>& pods) {
  PackInput input;
  input.nodes.reserve(nodes.size());
  for (const Pai2023Node& node : nodes) input.nodes.push_back(ToNodeSpec(node));
  input.tasks.reserve(pods.size());
  for (const Pai2023Pod& pod : pods) {
    input.tasks.push_back(PackTask{pod.line, ToTaskShape(pod), pod.gpu_spec});
  }
  return input;
}

Result<PackResult> Pack(const PackInput& input, const PackOptions& options) {
  core::NodeTable nodes;
  PackResult result;
  result.rule = options.rule;
  for (const core::NodeSpec& spec : input.nodes) {
    if (nodes.Find(spec.name)) return InvalidArgument("node '" + spec.name + "' listed twice");
    result.total_gpus += static_cast<int64_t>(spec.gpus.size());
    result.total_cpu_milli += spec.cpu.value();
    nodes.Add(spec);
  }
  result.nodes = static_cast<int64_t>(nodes.size());
  core::Capacity capacity(&nodes);

  const std::vector<core::PlacementRequest> requests =
      PlaceableRequests(nodes, input.tasks, result.never_fit);
  const core::FragmentationModel model = WorkloadOf(requests);
  core::PlaceOptions place;
  if (options.rule == PackRule::kBerth) place.fragmentation = &model;

  // Capacity only shrinks, so a request that failed once fails forever, and
  // so does any request asking for at least as much (PlacementMemo).
  core::PlacementMemo memo;
  result.stop = PackStop::kPassLimit;
  while (result.passes < options.max_passes) {
    ++result.passes;
    int64_t placed = 0;
    for (const core::PlacementRequest& request : requests) {
      if (memo.KnownToFail(request)) continue;
      const std::optional<core::Placement> placement = core::Place(capacity, request, place);
      if (!placement) {
        memo.RecordFailure(request);
        continue;
      }
      capacity.Allocate(*placement);
      result.allocated_gpu_milli += placement->TotalGpu().value();
      result.allocated_cpu_milli += request.shape.cpu.value();
      ++placed;
    }
    result.placed_per_pass.push_back(placed);
    result.pods_placed += placed;
    if (placed == 0) {
      result.stop = PackStop::kPassPlacedNothing;
      break;
    }
  }

  const int64_t total_milli = result.total_gpus * 1000;
  if (total_milli > 0) {
    result.unallocated_gpu_share =
        1.0 - static_cast<double>(result.allocated_gpu_milli) / static_cast<double>(total_milli);
  }
  if (model.total_weight() > 0) {
    result.expected_fragmented_gpus = static_cast<double>(model.ClusterFragmentation(capacity)) /
                                      static_cast<double>(model.total_weight()) / 1000.0;
  }
  return result;
}

}  // namespace berth::sim
