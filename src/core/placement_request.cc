#include "core/placement_request.h"

#include <algorithm>
#include <utility>

#include "core/constraint.h"

namespace berth::core {
namespace {

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The static filters of node_filters.h in their order: GPU model,
// nodelist, exclude, features, container runtime.
std::shared_ptr<const NodeEligibility> MatchNodes(const NodeTable& nodes, const JobSpec& spec) {
  static const NodeConstraints kNone;
  const NodeConstraints& constraints = spec.constraints ? *spec.constraints : kNone;
  auto eligibility = std::make_shared<NodeEligibility>();
  std::optional<FeatureExpression> features;
  if (!constraints.features.empty()) {
    Result<FeatureExpression> parsed = FeatureExpression::Parse(constraints.features);
    if (parsed.ok()) {
      features = std::move(*parsed);
    } else {
      eligibility->error = parsed.status().message();
    }
  }
  eligibility->verdict.reserve(nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n) {
    const NodeSpec& node = nodes.spec(static_cast<NodeId>(n));
    std::optional<NodeRejection> verdict;
    if (!spec.gpu_types.empty() && !Contains(spec.gpu_types, node.gpu_type)) {
      verdict = NodeRejection::kGpuModel;
    } else if (!constraints.nodelist.empty() && !Contains(constraints.nodelist, node.name)) {
      verdict = NodeRejection::kNodeList;
    } else if (Contains(constraints.exclude, node.name)) {
      verdict = NodeRejection::kExcluded;
    } else if (eligibility->error || (features && !features->Matches(node))) {
      verdict = NodeRejection::kFeatures;
    } else if (constraints.container && node.container_runtime.empty()) {
      verdict = NodeRejection::kContainerRuntime;
    }
    eligibility->verdict.push_back(verdict);
  }
  return eligibility;
}

// The one model every eligible node has, when the job's models narrow the
// index to it.
std::optional<GpuTypeId> OnlyKnownModel(const NodeTable& nodes, const JobSpec& spec) {
  std::optional<GpuTypeId> only;
  for (const std::string& name : spec.gpu_types) {
    const std::optional<GpuTypeId> type = nodes.FindType(name);
    if (!type || type == only) continue;
    if (only) return std::nullopt;  // two models the cluster has
    only = type;
  }
  return only;
}

PlacementRequest Shape(const JobSpec& spec) {
  PlacementRequest request;
  request.tasks = spec.tasks;
  request.shape = spec.task;
  request.locality = spec.gpu_locality;
  request.spread = spec.node_spread;
  request.task_shapes = spec.task_shapes;
  return request;
}

}  // namespace

int64_t PlacementRequest::TotalWholeGpus() const {
  if (task_shapes == nullptr) return static_cast<int64_t>(shape.whole_gpus()) * tasks;
  int64_t total = 0;
  for (const TaskShape& one : *task_shapes) total += one.whole_gpus();
  return total;
}

PlacementRequest RequestResolver::ResolveConstrained(const JobSpec& spec) {
  PlacementRequest request = Shape(spec);
  request.type = OnlyKnownModel(nodes_, spec);
  // One model the cluster has and nothing else: the index says it all.
  if (!spec.constraints && spec.gpu_types.size() == 1 && request.type) return request;
  auto [it, inserted] = eligibility_.try_emplace(
      Key{spec.gpu_types, spec.constraints ? *spec.constraints : NodeConstraints{}});
  if (inserted) it->second = MatchNodes(nodes_, spec);
  request.eligibility = it->second.get();
  return request;
}

std::vector<std::shared_ptr<const NodeEligibility>> RequestResolver::Eligibilities() const {
  std::vector<std::shared_ptr<const NodeEligibility>> out;
  out.reserve(eligibility_.size());
  for (const auto& [key, eligibility] : eligibility_) out.push_back(eligibility);
  return out;
}

ResolvedRequest ResolveRequest(const NodeTable& nodes, const JobSpec& spec) {
  RequestResolver resolver(nodes);
  ResolvedRequest resolved;
  resolved.request = resolver.Resolve(spec);
  std::vector<std::shared_ptr<const NodeEligibility>> made = resolver.Eligibilities();
  if (!made.empty()) resolved.eligibility = std::move(made.front());
  return resolved;
}

}  // namespace berth::core
