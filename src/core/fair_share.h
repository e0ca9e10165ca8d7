// Fair share at one instant (Slurm's classic fair-share factor with
// shares): each user's and each queue's decayed usage (running jobs
// included, read from the ledger in O(1) per account) as a fraction of all
// usage, over its normalized share. Built once per decision cycle for the
// orderers that weigh fair share (multifactor, berth), so neither
// recomputes it.
//
// Shares are normalized over those that share: a user or queue counts when
// it has usage on record or a live (pending, held or running) job.
// - A user's share: its shares (ClusterState::user_shares, 1 when not
//   named) over the sum of the sharing users' shares.
// - A queue's share is hierarchical: its shares over the sum of its sharing
//   siblings' (children of the same parent; top-level queues and queues the
//   tree does not name, at one share each, are siblings), times its parent's
//   share. A parent shares when any queue below it does. A queue's usage is
//   its own jobs' and its descendants', as for its quota.
// With every share at one and no parents this is the equal share: 1/n.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/cluster_state.h"
#include "core/time.h"

namespace berth::core {

class FairShare {
 public:
  FairShare(const ClusterState& state, Time now);
  FairShare(const FairShare&) = delete;  // the lookup tables point into the maps
  FairShare& operator=(const FairShare&) = delete;

  // U/S: the user's (queue's) fraction of all usage over its normalized
  // share; 0 for one never seen, 1 for one using exactly its share.
  double UserExponent(std::string_view user) const { return Find(user_exponent_, user); }
  double QueueExponent(std::string_view queue) const { return Find(queue_exponent_, queue); }

 private:
  using Table = std::map<std::string, double, std::less<>>;
  using Lookup = std::unordered_map<std::string_view, double>;
  static double Find(const Lookup& lookup, std::string_view key);
  static double Total(const Table& usage);
  void NormalizeUsers(const ClusterState::UserShares& shares);
  void NormalizeQueues(const QuotaTree* tree);

  Table user_usage_;
  Table queue_usage_;
  // Hashed views for the per-job lookups; never iterated, so no hash order
  // reaches a decision.
  Lookup user_exponent_;
  Lookup queue_exponent_;
};

}  // namespace berth::core
