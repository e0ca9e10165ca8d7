#include "core/quota.h"

#include <utility>

#include "core/cluster_state.h"

namespace berth::core {
namespace {

std::string Gpus(MilliGpu milli) {
  return std::to_string(milli.value() / 1000) +
         (milli.value() % 1000 != 0 ? "." + std::to_string(milli.value() % 1000) : "") + " GPUs";
}

// The governance keys of one queue: shares and limits positive, names in the
// lists non-empty.
Status CheckGovernance(const QueueSpec& queue) {
  const std::string at = "queues." + queue.name + ".";
  if (queue.shares < 1) {
    return InvalidArgument(at + "shares: must be at least 1, got " + std::to_string(queue.shares));
  }
  if (queue.max_gpus_per_user && queue.max_gpus_per_user->value() < 1000) {
    return InvalidArgument(at + "max_gpus_per_user: must be at least 1 GPU");
  }
  if (queue.max_running_jobs_per_user && *queue.max_running_jobs_per_user < 1) {
    return InvalidArgument(at + "max_running_jobs_per_user: must be at least 1, got " +
                           std::to_string(*queue.max_running_jobs_per_user));
  }
  if (queue.max_time && *queue.max_time <= Duration::Zero()) {
    return InvalidArgument(at + "max_time_s: must be positive");
  }
  if (queue.default_memory.per_gpu && queue.default_memory.per_gpu->value() < 1) {
    return InvalidArgument(at + "default_memory_per_gpu_mib: must be at least 1");
  }
  if (queue.default_memory.per_cpu && queue.default_memory.per_cpu->value() < 1) {
    return InvalidArgument(at + "default_memory_per_cpu_mib: must be at least 1");
  }
  for (const std::string& user : queue.allow_users) {
    if (user.empty()) return InvalidArgument(at + "allow_users: a name is empty");
  }
  for (const std::string& group : queue.allow_groups) {
    if (group.empty()) return InvalidArgument(at + "allow_groups: a name is empty");
  }
  return Status::Ok();
}

}  // namespace

Result<QuotaTree> QuotaTree::Make(std::vector<QueueSpec> queues) {
  QuotaTree tree;
  for (size_t i = 0; i < queues.size(); ++i) {
    const QueueSpec& queue = queues[i];
    if (queue.name.empty()) return InvalidArgument("queues: a queue has an empty name");
    if (!tree.by_name_.emplace(queue.name, i).second) {
      return InvalidArgument("queues: '" + queue.name + "' is listed twice");
    }
    if (queue.guaranteed.value() < 0) {
      return InvalidArgument("queues." + queue.name + ".guaranteed: must be >= 0");
    }
    if (queue.ceiling && *queue.ceiling < queue.guaranteed) {
      return InvalidArgument("queues." + queue.name + ".ceiling: " + Gpus(*queue.ceiling) +
                             " is below its guarantee of " + Gpus(queue.guaranteed));
    }
    BERTH_RETURN_IF_ERROR(CheckGovernance(queue));
    if (queue.is_default) {
      if (tree.default_) {
        return InvalidArgument("queues." + queue.name + ".default: queue '" +
                               queues[*tree.default_].name + "' is the default already");
      }
      tree.default_ = i;
    }
    tree.limits_users_ |= queue.max_gpus_per_user || queue.max_running_jobs_per_user;
  }
  tree.paths_.resize(queues.size());
  std::vector<MilliGpu> children_guaranteed(queues.size());
  for (size_t i = 0; i < queues.size(); ++i) {
    size_t at = i;
    while (true) {
      tree.paths_[i].push_back(at);
      if (tree.paths_[i].size() > queues.size()) {
        return InvalidArgument("queues." + queues[i].name + ".parent: the parents form a cycle");
      }
      const std::string& parent = queues[at].parent;
      if (parent.empty()) break;
      auto it = tree.by_name_.find(parent);
      if (it == tree.by_name_.end()) {
        return InvalidArgument("queues." + queues[at].name + ".parent: no queue named '" + parent +
                               "'");
      }
      if (at == i) children_guaranteed[it->second] += queues[i].guaranteed;
      at = it->second;
    }
  }
  for (size_t i = 0; i < queues.size(); ++i) {
    bool has_children = false;
    for (const QueueSpec& queue : queues) has_children |= queue.parent == queues[i].name;
    if (has_children && children_guaranteed[i] > queues[i].guaranteed) {
      return InvalidArgument("queues." + queues[i].name + ": children guarantee " +
                             Gpus(children_guaranteed[i]) + ", more than its own " +
                             Gpus(queues[i].guaranteed));
    }
  }
  tree.queues_ = std::move(queues);
  return tree;
}

std::optional<size_t> QuotaTree::Find(std::string_view name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

QuotaUsage::QuotaUsage(const QuotaTree& tree, const ClusterState& state)
    : tree_(tree), used_(tree.queues().size()) {
  for (const auto& [id, job] : state.running()) Add(job->spec.queue, job->spec.total_gpu());
}

void QuotaUsage::Add(std::string_view queue, MilliGpu gpus) {
  if (std::optional<size_t> index = tree_.Find(queue)) {
    for (size_t at : tree_.Path(*index)) used_[at] += gpus;
  }
}

void QuotaUsage::Remove(std::string_view queue, MilliGpu gpus) {
  if (std::optional<size_t> index = tree_.Find(queue)) {
    for (size_t at : tree_.Path(*index)) used_[at] -= gpus;
  }
}

MilliGpu QuotaUsage::used(std::string_view queue) const {
  std::optional<size_t> index = tree_.Find(queue);
  return index ? used_[*index] : MilliGpu(0);
}

bool QuotaUsage::FitsCeilings(std::string_view queue, MilliGpu gpus) const {
  std::optional<size_t> index = tree_.Find(queue);
  if (!index) return true;
  for (size_t at : tree_.Path(*index)) {
    const std::optional<MilliGpu>& ceiling = tree_.queues()[at].ceiling;
    if (ceiling && used_[at] + gpus > *ceiling) return false;
  }
  return true;
}

bool QuotaUsage::WithinGuarantee(std::string_view queue, MilliGpu gpus) const {
  std::optional<size_t> index = tree_.Find(queue);
  return index && used_[*index] + gpus <= tree_.queues()[*index].guaranteed;
}

bool QuotaUsage::Borrowing(std::string_view queue) const {
  std::optional<size_t> index = tree_.Find(queue);
  // The default queue has no guarantee: whatever it holds is borrowed.
  if (!index) return true;
  return used_[*index] > tree_.queues()[*index].guaranteed;
}

}  // namespace berth::core
