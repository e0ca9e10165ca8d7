// Team quotas: hierarchical queues with a guaranteed share, a ceiling, and
// borrowing of idle capacity (the shape of Kueue's cluster queues in a
// cohort, and of YARN's capacity scheduler).
//
//   root
//   ├── vision        guaranteed 128 GPUs, ceiling 256
//   │   ├── detection guaranteed  64
//   │   └── segment.  guaranteed  64
//   └── nlp           guaranteed 256, no ceiling
//
// - A queue's usage is what its jobs and its descendants' jobs hold.
// - Ceiling: a job starts only if its queue and every ancestor stay at or
//   under their ceilings. With no ceiling a queue may borrow any idle GPUs.
// - Guarantee: GPUs the queue can always get back. A queue using more than
//   its guarantee is borrowing; a job whose queue (with the job) stays within
//   its guarantee may reclaim by preempting borrowers' preemptible jobs.
// - Jobs of queues the tree does not name belong to a default queue with no
//   guarantee and no ceiling: they only ever borrow.
//
// A queue is also governed (Slurm's QOS, Kueue's ClusterQueue), and every
// rule holds for the queue's jobs and its descendants' jobs alike, so a
// child can narrow its parent's rules but never widen them:
// - Per-user running limits: the GPUs and the jobs one user may have
//   running in the queue (user_limits.h; the core enforces them).
// - Submission rules: the highest priority, the longest time limit, who may
//   submit. The owner checks them when a job arrives; the core never reads
//   them (a job that breaks one is refused before it is queued).
// - Fair-share shares: the queue's share among its siblings (fair_share.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "core/resources.h"
#include "core/time.h"

namespace berth::core {

class ClusterState;

// The memory a job asking none gets in a queue (core/default_memory.h):
// Slurm's DefMemPerGPU and DefMemPerCPU.
struct DefaultMemory {
  std::optional<MemoryMiB> per_gpu{};
  std::optional<MemoryMiB> per_cpu{};

  bool any() const { return per_gpu.has_value() || per_cpu.has_value(); }
  bool operator==(const DefaultMemory&) const = default;
};

struct QueueSpec {
  std::string name;
  std::string parent;  // empty: a top-level queue
  MilliGpu guaranteed;
  std::optional<MilliGpu> ceiling;

  // Governance (issue 27). Every member below has a default, so that specs
  // written as {name, parent, guaranteed, ceiling} still mean an ungoverned
  // queue.
  // Fair share: the queue's shares among its siblings (Slurm's fairshare=N).
  int64_t shares = 1;
  // Per-user running limits (none: unlimited), counted over the queue and
  // its descendants.
  std::optional<MilliGpu> max_gpus_per_user{};
  std::optional<int64_t> max_running_jobs_per_user{};
  // Submission rules, for the owner (see above). Empty lists let everyone in.
  std::optional<int32_t> max_priority{};
  std::optional<Duration> max_time{};
  std::vector<std::string> allow_users{};
  std::vector<std::string> allow_groups{};  // Unix groups, resolved by the owner
  // Jobs that name no queue go to this one (at most one queue is the
  // default); with none, they go to the ungoverned default queue above.
  bool is_default = false;
  // Memory for its jobs that ask none; none set: they reserve none.
  DefaultMemory default_memory{};

  bool operator==(const QueueSpec&) const = default;
};

class QuotaTree {
 public:
  // Validates: names unique and non-empty, parents exist, no cycles, no
  // negative amounts, a ceiling never below the guarantee, children's
  // guarantees fit in their parent's, shares and limits positive, at most
  // one default queue. InvalidArgument names the queue and the key.
  static Result<QuotaTree> Make(std::vector<QueueSpec> queues);

  const std::vector<QueueSpec>& queues() const { return queues_; }
  // Index of a queue by name; nullopt for the default queue.
  std::optional<size_t> Find(std::string_view name) const;
  // The queue and its ancestors, leaf first.
  const std::vector<size_t>& Path(size_t queue) const { return paths_[queue]; }
  // The queue that jobs naming none go to, if one is marked default.
  const QueueSpec* default_queue() const { return default_ ? &queues_[*default_] : nullptr; }
  // Whether any queue sets a per-user running limit.
  bool limits_users() const { return limits_users_; }

 private:
  std::vector<QueueSpec> queues_;
  std::vector<std::vector<size_t>> paths_;
  std::map<std::string, size_t, std::less<>> by_name_;
  std::optional<size_t> default_;
  bool limits_users_ = false;
};

// Usage per queue during one decision cycle: starts and preemptions update
// it as the cycle decides them.
class QuotaUsage {
 public:
  QuotaUsage(const QuotaTree& tree, const ClusterState& state);

  // Whether `gpus` more for `queue` keep it and its ancestors under ceilings.
  bool FitsCeilings(std::string_view queue, MilliGpu gpus) const;
  // Whether the queue, with `gpus` more, stays within its guarantee.
  bool WithinGuarantee(std::string_view queue, MilliGpu gpus) const;
  // Whether the queue uses more than its guarantee now.
  bool Borrowing(std::string_view queue) const;
  void Add(std::string_view queue, MilliGpu gpus);
  void Remove(std::string_view queue, MilliGpu gpus);
  MilliGpu used(std::string_view queue) const;

 private:
  const QuotaTree& tree_;
  std::vector<MilliGpu> used_;  // per tree queue, including descendants
};

}  // namespace berth::core
