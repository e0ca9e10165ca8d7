#include "core/fair_share.h"

#include <algorithm>

namespace berth::core {

FairShare::FairShare(const ClusterState& state, Time now) {
  const UsageLedger& ledger = state.usage();
  for (const auto& [queue, value] : ledger.queues()) {
    queue_usage_[queue] += ledger.QueueUsage(queue, now);
  }
  for (const auto& [user, value] : ledger.users()) {
    user_usage_[user] += ledger.UserUsage(user, now);
  }
  // Those waiting share too, used or not.
  for (const auto& [user, count] : state.waiting_users()) user_usage_.try_emplace(user, 0.0);
  for (const auto& [queue, count] : state.waiting_queues()) queue_usage_.try_emplace(queue, 0.0);
  Normalize(user_usage_, user_exponent_);
  Normalize(queue_usage_, queue_exponent_);
}

void FairShare::Normalize(const Table& usage, Lookup& exponent) {
  double total = 0;
  for (const auto& [key, value] : usage) total += value;
  const double share = 1.0 / static_cast<double>(std::max<size_t>(1, usage.size()));
  exponent.reserve(usage.size());
  for (const auto& [key, value] : usage) {
    exponent.emplace(key, total > 0 ? value / total / share : 0.0);
  }
}

double FairShare::Find(const Lookup& lookup, std::string_view key) {
  auto it = lookup.find(key);
  return it == lookup.end() ? 0.0 : it->second;
}

}  // namespace berth::core
