// Orderers: which job goes first. One narrow interface, several small
// implementations (orderers.h), chosen by name in policy.cc.
//
// An orderer maps each job to a key; smaller keys go first and equal keys
// fall back to the job id, so every order is total and deterministic. Keys
// are integers (scores are scaled and rounded once), so no platform's
// floating-point quirks can reorder jobs between two runs.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/cluster_state.h"
#include "core/fair_share.h"
#include "core/job.h"
#include "core/order_key.h"
#include "core/runtime_estimator.h"
#include "core/time.h"

namespace berth::core {

struct OrderContext {
  const ClusterState& state;
  Time now;
  const RuntimeEstimator& runtimes;
  // Set by Decide for orderers that UseFairShare(); computed once per cycle.
  const FairShare* fair_share = nullptr;
  // A cycle that ranks only the jobs that arrived since the last full one
  // (DecideOptions::reuse): terms that read every live job (the Berth drain
  // horizon) are left to the next full cycle, as the known jobs' keys are.
  bool partial = false;
};

class Orderer {
 public:
  virtual ~Orderer() = default;
  // Keys for `jobs` (pending or running), written to `keys` in the same
  // order. Batch form so an orderer can prepare shared inputs (fair-share
  // factors) once per cycle.
  virtual void Keys(std::span<const Job* const> jobs, const OrderContext& context,
                    std::vector<OrderKey>& keys) const = 0;
  // The earliest time after `context.now` at which a key changes other than
  // by the passage of time shared by every job (for LAS: a running job
  // crossing a queue threshold). The owner re-decides then.
  virtual std::optional<Time> NextKeyChange(const OrderContext& context) const {
    (void)context;
    return std::nullopt;
  }
  // Whether Keys reads OrderContext::fair_share (then it must be set).
  virtual bool UsesFairShare() const { return false; }
  // Whether a job starting with this key starts under a starvation
  // guarantee (Job::guaranteed): it keeps its place until it ends.
  virtual bool Guarantees(const OrderKey& key) const {
    (void)key;
    return false;
  }
  // Whether a job with this key may stop the running jobs ordered after it
  // (preemptive disciplines; quota reclaim does not ask).
  virtual bool PreemptsByOrder(const OrderKey& key) const {
    (void)key;
    return true;
  }
};

}  // namespace berth::core
