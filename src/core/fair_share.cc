#include "core/fair_share.h"

#include <optional>
#include <vector>

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
  NormalizeUsers(state.user_shares());
  NormalizeQueues(state.quotas());
}

double FairShare::Total(const Table& usage) {
  double total = 0;
  for (const auto& [key, value] : usage) total += value;
  return total;
}

void FairShare::NormalizeUsers(const ClusterState::UserShares& shares) {
  auto shares_of = [&shares](const std::string& user) -> int64_t {
    auto it = shares.find(user);
    return it == shares.end() ? 1 : it->second;
  };
  const double total = Total(user_usage_);
  int64_t all_shares = 0;
  for (const auto& [user, value] : user_usage_) all_shares += shares_of(user);
  user_exponent_.reserve(user_usage_.size());
  for (const auto& [user, value] : user_usage_) {
    const double share = static_cast<double>(shares_of(user)) / static_cast<double>(all_shares);
    user_exponent_.emplace(user, total > 0 ? value / total / share : 0.0);
  }
}

void FairShare::NormalizeQueues(const QuotaTree* tree) {
  const double total = Total(queue_usage_);
  const size_t queues = tree == nullptr ? 0 : tree->queues().size();
  // Which tree queues share, with their subtree's usage; how many shares
  // the sharing children of each parent hold (the last slot: the top level).
  std::vector<bool> sharing(queues, false);
  std::vector<double> subtree(queues, 0.0);
  std::vector<int64_t> children_shares(queues + 1, 0);
  const size_t top = queues;
  auto parent_of = [tree, top](size_t queue) {
    const std::vector<size_t>& path = tree->Path(queue);
    return path.size() > 1 ? path[1] : top;
  };
  std::vector<std::optional<size_t>> index;  // of each account, in map order
  index.reserve(queue_usage_.size());
  for (const auto& [queue, value] : queue_usage_) {
    index.push_back(tree == nullptr ? std::nullopt : tree->Find(queue));
    if (!index.back()) {
      children_shares[top] += 1;
      continue;
    }
    for (size_t at : tree->Path(*index.back())) {
      subtree[at] += value;
      if (!sharing[at]) {
        sharing[at] = true;
        children_shares[parent_of(at)] += tree->queues()[at].shares;
      }
    }
  }
  queue_exponent_.reserve(queue_usage_.size());
  size_t next = 0;
  for (const auto& [queue, value] : queue_usage_) {
    const std::optional<size_t> at = index[next++];
    double share = 1.0;
    double usage = value;
    if (!at) {
      share *= 1.0 / static_cast<double>(children_shares[top]);
    } else {
      usage = subtree[*at];
      const std::vector<size_t>& path = tree->Path(*at);
      for (auto it = path.rbegin(); it != path.rend(); ++it) {
        share *= static_cast<double>(tree->queues()[*it].shares) /
                 static_cast<double>(children_shares[parent_of(*it)]);
      }
    }
    queue_exponent_.emplace(queue, total > 0 ? usage / total / share : 0.0);
  }
}

double FairShare::Find(const Lookup& lookup, std::string_view key) {
  auto it = lookup.find(key);
  return it == lookup.end() ? 0.0 : it->second;
}

}  // namespace berth::core
