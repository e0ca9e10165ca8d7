// The Berth policy's ordering: shortest predicted remaining service first,
// falling back to least attained service when a prediction proves wrong,
// softened by aging and fair share, with a starvation bound.
//
//   key = (priority class,
//          starving head or guaranteed ? 0 : head past the hard bound ? 1
//            : drain-long ? 2 : 3,
//          head ? submit time : drain-long ? -remaining GPU-seconds : score)
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
//   every job becomes the head in turn. The head starts under a guarantee
//   (Job::guaranteed): while it runs it ranks ahead of its whole class, so
//   newcomers cannot throw it out.
// - Overload: when the jobs waiting less than the bound are a backlog (they
//   ask for more than drain_load of the cluster's GPUs, the line the drain
//   rule below draws), starving jobs yield to them. There is no head, and
//   guaranteed runs rank by their score again (they may be preempted where
//   that loses no work: victims.h). Why:
//   the jobs that starve are the long ones; forcing them in while a backlog
//   of younger work waits holds GPUs for days that many short jobs need, and
//   a cluster overloaded for a week then pays for it in every job's wait
//   (ITP cluster08 in docs/evaluation.md). The line is the drain rule's: a
//   queue too long to drain is too long to hand to its starving jobs (the
//   line at the whole cluster cost the crowded clusters: docs/evaluation.md).
//   The starving jobs are a backlog of their own when together they ask for
//   more GPUs than the cluster has: then they could not all run even on an
//   empty cluster, heads one at a time are FIFO over the longest jobs, and
//   each new starving job joins a line the bound can no longer keep (small
//   crowded clusters, ITP cluster01 on 9 x 8 and cluster05 on 3 x 8: on
//   Philly it never happens). They yield then too, to their scores.
//   Once the younger jobs ask for less again, and the starving ones fit the
//   cluster, the oldest starving job is the head. A job that waited the
//   hard bound is the head, and keeps its guarantee, overload or not: no
//   job waits forever. It goes first without preempting (PreemptsByOrder):
//   it holds the reservation and starts as running jobs end; later jobs
//   start only where, by their predicted ends, they cannot delay it. A job
//   that waited that long waited through an overload and is among the
//   largest; stopping running work for it sends days of many jobs' runs
//   back to a queue that was a backlog until now (ITP cluster06: a 64-GPU
//   head stopping up to eight 8-GPU runs of several days, which then
//   waited days more; docs/evaluation.md).
// - Fair share: 2^(w_user x U_user/S_user + w_queue x U_queue/S_queue), with U
//   a user's (queue's) share of decayed usage and S an equal share.
// - Draining (the pending jobs ask for at most drain_load of the cluster's
//   GPUs): shortest-first gains little once the queue fits the cluster, and
//   leaving the longest jobs for last stretches the end of the schedule
//   (Graham's LPT rule for makespan). The drain horizon is the outstanding
//   predicted GPU-seconds, running and pending, over the cluster's GPUs: a
//   pending GPU job predicted to run at least that long would end after
//   everything else if it waited, so it is drain-long and goes first,
//   largest first in predicted GPU-seconds, as first-fit decreasing packs
//   (the first that does not fit gets the reservation). It does not preempt
//   for that place (PreemptsByOrder; quota reclaim still applies): it goes
//   first for the schedule's end, not for urgency, and letting it stop
//   running work multiplied preemptions on Philly 4.5x (docs/evaluation.md).
//   The horizon reads every live job, so only full cycles apply the rule
//   (OrderContext::partial): between them an arrival ranks by its score.
#pragma once

#include "core/orderer.h"

namespace berth::core {

// What the score's size term is.
enum class SizeMeasure {
  kPredictedRemaining,  // the estimator's expected remaining time
  kGittinsRank,         // the estimator's Rank: Gittins over learned sizes
};

struct BerthOrderConfig {
  // Gittins by default (issue 30): with the gain rule it beat the point
  // prediction on most traces and pools (docs/evaluation.md).
  SizeMeasure size = SizeMeasure::kGittinsRank;
  Duration starvation_bound = Duration::Hours(36);
  // Past this wait a starving job is the head even on an overloaded cluster.
  Duration starvation_hard_bound = Duration::Hours(144);
  Duration aging = Duration::Hours(4);  // a job that waited this long counts half its size
  double user_fair_share_weight = 0.5;
  double queue_fair_share_weight = 0.5;
  // The line between a queue that drains and a backlog, as a share of the
  // cluster's GPUs: the queue drains while its pending jobs ask for at most
  // this, and starving jobs yield while the younger ones ask for more.
  double drain_load = 0.75;
};

class BerthOrderer final : public Orderer {
 public:
  explicit BerthOrderer(BerthOrderConfig config) : config_(config) {}
  void Keys(std::span<const Job* const> jobs, const OrderContext& context,
            std::vector<OrderKey>& keys) const override;
  // A pending job reaching either starvation bound, or a running job
  // outliving its prediction.
  std::optional<Time> NextKeyChange(const OrderContext& context) const override;
  bool UsesFairShare() const override { return true; }
  // The starving head starts under the guarantee.
  bool Guarantees(const OrderKey& key) const override {
    return key.secondary == kHeadClass || key.secondary == kReservingHeadClass;
  }
  // A head past the hard bound and drain-long jobs go first without
  // stopping anyone.
  bool PreemptsByOrder(const OrderKey& key) const override {
    return key.secondary != kReservingHeadClass && key.secondary != kDrainLongClass;
  }

  // Time since submission not spent running.
  static Duration Waited(const Job& job, Time now);

 private:
  // OrderKey::secondary: the starving head and guaranteed runs, the head
  // past the hard bound, drain-long pending jobs, everyone else.
  static constexpr int64_t kHeadClass = 0;
  static constexpr int64_t kReservingHeadClass = 1;
  static constexpr int64_t kDrainLongClass = 2;
  static constexpr int64_t kScoredClass = 3;

  struct Starvation {
    std::optional<JobId> head;   // who goes first, if anyone
    bool head_reserves = false;  // the head waited the hard bound: it does not preempt
    bool overloaded = false;     // the younger jobs, or the starving ones, are a backlog
  };
  // Whether jobs asking for `milli_gpus` are a backlog on the cluster, not a
  // queue that drains: the one line the drain rule and the starvation yield
  // share (BerthOrderConfig::drain_load).
  bool IsBacklog(int64_t milli_gpus, int64_t cluster_milli_gpus) const;
  // One pass over the pending jobs. The head candidate is the starving job
  // submitted first (ties to the lowest id).
  Starvation FindStarvation(const OrderContext& context, int64_t cluster_milli_gpus) const;
  // The drain horizon while the queue drains, else nullopt.
  std::optional<Duration> DrainHorizon(const OrderContext& context,
                                       int64_t cluster_milli_gpus) const;
  // Whether a guaranteed run keeps ranking ahead of its class now.
  bool KeepsGuarantee(const Job& job, const Starvation& starvation, Time now) const;
  // Remaining GPU-seconds x fair-share penalty / aging, in milli-units.
  int64_t Score(const Job& job, const OrderContext& context) const;
  // Predicted GPU-seconds still ahead, in milli-units.
  static int64_t RemainingWork(const Job& job, const OrderContext& context);

  BerthOrderConfig config_;
};

}  // namespace berth::core
