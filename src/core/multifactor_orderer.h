// Slurm-style multifactor priority (priority/multifactor):
//   score = age_weight * min(age / max_age, 1) + fairshare_weight * F
// with the classic fair-share factor F = 2^(-U/S): U is the queue's share of
// decayed usage (ClusterState's ledger plus running jobs so far), S its share
// of the cluster (equal shares among the queues in play). Higher score first,
// then arrival. No size or partition factors: the reference has none.
#pragma once

#include "core/orderer.h"

namespace berth::core {

struct MultifactorWeights {
  double age = 1000;
  Duration max_age = Duration::Days(7);
  double fair_share = 1000;
};

class MultifactorOrderer final : public Orderer {
 public:
  explicit MultifactorOrderer(MultifactorWeights weights) : weights_(weights) {}
  void Keys(std::span<const Job* const> jobs, const OrderContext& context,
            std::vector<OrderKey>& keys) const override;
  bool UsesFairShare() const override { return true; }

 private:
  MultifactorWeights weights_;
};

}  // namespace berth::core
