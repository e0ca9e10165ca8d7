// Fair share at one instant: each user's and each queue's decayed usage
// (running jobs included, read from the ledger in O(1) per account) over an
// equal share of the total. Built once per decision cycle for the orderers
// that weigh fair share (multifactor, berth), so neither recomputes it.
//
// A user or queue counts toward the equal share when it has usage on record
// or a live (pending, held or running) job.
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

  // U/S: the user's (queue's) share of all usage over an equal share; 0 for
  // one never seen, 1 for one using exactly its share.
  double UserExponent(std::string_view user) const { return Find(user_exponent_, user); }
  double QueueExponent(std::string_view queue) const { return Find(queue_exponent_, queue); }

 private:
  using Table = std::map<std::string, double, std::less<>>;
  using Lookup = std::unordered_map<std::string_view, double>;
  static double Find(const Lookup& lookup, std::string_view key);
  static void Normalize(const Table& usage, Lookup& exponent);

  Table user_usage_;
  Table queue_usage_;
  // Hashed views for the per-job lookups; never iterated, so no hash order
  // reaches a decision.
  Lookup user_exponent_;
  Lookup queue_exponent_;
};

}  // namespace berth::core
