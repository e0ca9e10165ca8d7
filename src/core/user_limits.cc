#include "core/user_limits.h"

#include "core/cluster_state.h"

namespace berth::core {

UserLimitUsage::UserLimitUsage(const QuotaTree& tree, const ClusterState& state)
    : tree_(tree), limited_paths_(tree.queues().size()), running_(tree.queues().size()) {
  for (size_t queue = 0; queue < tree.queues().size(); ++queue) {
    for (size_t at : tree.Path(queue)) {
      const QueueSpec& spec = tree.queues()[at];
      if (spec.max_gpus_per_user || spec.max_running_jobs_per_user) {
        limited_paths_[queue].push_back(at);
      }
    }
  }
  for (const auto& [id, job] : state.running()) Add(job->spec);
}

const std::vector<size_t>& UserLimitUsage::LimitedPath(const JobSpec& job) const {
  static const std::vector<size_t> kNone;
  const std::optional<size_t> queue = tree_.Find(job.queue);
  return queue ? limited_paths_[*queue] : kNone;
}

std::optional<UserLimitHit> UserLimitUsage::Check(const JobSpec& job) const {
  for (size_t at : LimitedPath(job)) {
    const QueueSpec& spec = tree_.queues()[at];
    Running now;
    if (auto it = running_[at].find(job.user); it != running_[at].end()) now = it->second;
    const int64_t gpus = job.total_gpu().value();
    if (spec.max_gpus_per_user && now.milli_gpus + gpus > spec.max_gpus_per_user->value()) {
      return UserLimitHit{UserLimitKind::kGpus, static_cast<uint32_t>(at), now.milli_gpus,
                          spec.max_gpus_per_user->value()};
    }
    if (spec.max_running_jobs_per_user && now.jobs + 1 > *spec.max_running_jobs_per_user) {
      return UserLimitHit{UserLimitKind::kRunningJobs, static_cast<uint32_t>(at), now.jobs,
                          *spec.max_running_jobs_per_user};
    }
  }
  return std::nullopt;
}

void UserLimitUsage::Add(const JobSpec& job) { Count(job, +1); }
void UserLimitUsage::Remove(const JobSpec& job) { Count(job, -1); }

void UserLimitUsage::Count(const JobSpec& job, int64_t sign) {
  for (size_t at : LimitedPath(job)) {
    Running& running = running_[at][job.user];
    running.milli_gpus += sign * job.total_gpu().value();
    running.jobs += sign;
  }
}

}  // namespace berth::core
