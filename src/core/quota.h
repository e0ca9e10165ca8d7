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
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "core/resources.h"

namespace berth::core {

class ClusterState;

struct QueueSpec {
  std::string name;
  std::string parent;  // empty: a top-level queue
  MilliGpu guaranteed;
  std::optional<MilliGpu> ceiling;
};

class QuotaTree {
 public:
  // Validates: names unique and non-empty, parents exist, no cycles, no
  // negative amounts, a ceiling never below the guarantee, and children's
  // guarantees fit in their parent's. InvalidArgument names the queue.
  static Result<QuotaTree> Make(std::vector<QueueSpec> queues);

  const std::vector<QueueSpec>& queues() const { return queues_; }
  // Index of a queue by name; nullopt for the default queue.
  std::optional<size_t> Find(std::string_view name) const;
  // The queue and its ancestors, leaf first.
  const std::vector<size_t>& Path(size_t queue) const { return paths_[queue]; }

 private:
  std::vector<QueueSpec> queues_;
  std::vector<std::vector<size_t>> paths_;
  std::map<std::string, size_t, std::less<>> by_name_;
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
