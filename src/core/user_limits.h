// Per-user running limits of team queues (Slurm's QOS MaxTRESPerUser and
// MaxJobsPerUser, Kueue's per-user quotas): the GPUs and the jobs one user
// may have running in a queue, counted over the queue and its descendants.
//
// A job may start only if, in its queue and in every ancestor that sets a
// limit, its user's running GPUs and jobs stay within the limit with the
// job added. The count is of one decision cycle: it starts from the running
// jobs and the cycle adds each start (and takes out each preemption) as it
// decides it, like QuotaUsage, so two jobs started in one cycle cannot
// together exceed a limit. A job held back waits with ReasonCode::kUserLimit
// and never blocks the jobs behind it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/decision.h"
#include "core/job.h"
#include "core/quota.h"

namespace berth::core {

class ClusterState;

class UserLimitUsage {
 public:
  // REQUIRES: `tree` outlives this object.
  UserLimitUsage(const QuotaTree& tree, const ClusterState& state);

  // The first limit (the job's queue first, then its ancestors; GPUs before
  // jobs) that the job would break by starting now; nullopt when it may.
  std::optional<UserLimitHit> Check(const JobSpec& job) const;
  // A start (+) or a stop (-) decided this cycle.
  void Add(const JobSpec& job);
  void Remove(const JobSpec& job);

 private:
  struct Running {
    int64_t milli_gpus = 0;
    int64_t jobs = 0;
  };
  // The queues on the job's path that set a limit, leaf first.
  const std::vector<size_t>& LimitedPath(const JobSpec& job) const;
  void Count(const JobSpec& job, int64_t sign);

  const QuotaTree& tree_;
  std::vector<std::vector<size_t>> limited_paths_;  // per tree queue
  // Per tree queue: each user's running GPUs and jobs there.
  std::vector<std::map<std::string, Running, std::less<>>> running_;
};

}  // namespace berth::core
