// The Berth policy's ordering: shortest predicted remaining service first,
// falling back to least attained service when a prediction proves wrong,
// softened by aging and fair share, with a hard starvation bound.
//
//   key = (priority class,
//          starving head ? 0 : 1,
//          starving head ? submit time : score)
//   score = remaining GPU-seconds x fair-share penalty / (1 + waited / aging)
//
// - Remaining GPU-seconds come from the policy's estimator (the runtime
//   predictor): predicted run time left x GPUs. A job that has run past its
//   prediction is expected to run as long again (runtime_predictor.h), so it
//   drifts back as its attained service grows, as under LAS.
// - Waited = time since submission not spent running.
// - Starving: waited at least the starvation bound. The oldest starving job
//   is the head: it goes first, so it starts (preempting if it must) or gets
//   the reservation; the others keep their aged score. One head at a time
//   keeps a backlog of old jobs from turning the queue into FIFO, and still
//   every job becomes the head in turn, so none waits forever. The head
//   starts under a guarantee (Job::guaranteed): while it runs it ranks ahead
//   of its whole class, so newcomers cannot throw it out.
// - Fair share: 2^(w_user x U_user/S_user + w_queue x U_queue/S_queue), with U
//   a user's (queue's) share of decayed usage and S an equal share.
#pragma once

#include "core/orderer.h"

namespace berth::core {

struct BerthOrderConfig {
  Duration starvation_bound = Duration::Hours(36);
  Duration aging = Duration::Hours(4);  // a job that waited this long counts half its size
  double user_fair_share_weight = 0.5;
  double queue_fair_share_weight = 0.5;
};

class BerthOrderer final : public Orderer {
 public:
  explicit BerthOrderer(BerthOrderConfig config) : config_(config) {}
  void Keys(std::span<const Job* const> jobs, const OrderContext& context,
            std::vector<OrderKey>& keys) const override;
  // A pending job reaching the starvation bound, or a running job outliving
  // its prediction.
  std::optional<Time> NextKeyChange(const OrderContext& context) const override;
  bool UsesFairShare() const override { return true; }
  // The starving head starts under the guarantee.
  bool Guarantees(const OrderKey& key) const override { return key.secondary == 0; }

  // Time since submission not spent running.
  static Duration Waited(const Job& job, Time now);

 private:
  // The pending job that waited past the bound and was submitted first (ties
  // to the lowest id), if any.
  std::optional<JobId> StarvingHead(const OrderContext& context) const;
  // Remaining GPU-seconds x fair-share penalty / aging, in milli-units.
  int64_t Score(const Job& job, const OrderContext& context) const;

  BerthOrderConfig config_;
};

}  // namespace berth::core
