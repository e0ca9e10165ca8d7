#include "core/berth_orderer.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/check.h"

namespace berth::core {
namespace {

// Milli-GPUs on the nodes that take work.
int64_t ClusterMilliGpus(const ClusterState& state) {
  const NodeTable& nodes = state.nodes();
  int64_t cluster = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto node = static_cast<NodeId>(i);
    if (state.capacity().schedulable(node)) {
      cluster += static_cast<int64_t>(nodes.spec(node).gpus.size()) * 1000;
    }
  }
  return cluster;
}

}  // namespace

bool BerthOrderer::IsBacklog(int64_t milli_gpus, int64_t cluster_milli_gpus) const {
  return static_cast<double>(milli_gpus) >
         config_.drain_load * static_cast<double>(cluster_milli_gpus);
}

BerthOrderer::Starvation BerthOrderer::FindStarvation(const OrderContext& context,
                                                      int64_t cluster_milli_gpus) const {
  // Only the jobs past the bound are walked (ClusterState::pending_by_wait):
  // the others are the young demand, all of it less theirs.
  std::optional<JobId> oldest;
  Duration oldest_waited;
  Time oldest_submit = Time::Infinite();
  int64_t starving_demand = 0;  // milli-GPUs asked for by jobs past the bound
  const Time cutoff = context.now - config_.starvation_bound;
  for (const ClusterState::PendingWait& wait : context.state.pending_by_wait()) {
    if (wait.origin > cutoff) break;  // it, and every job after it, waited less
    starving_demand += wait.milli_gpus;
    if (wait.submit < oldest_submit || (wait.submit == oldest_submit && wait.id < *oldest)) {
      oldest_submit = wait.submit;
      oldest = wait.id;
      oldest_waited = context.now - wait.origin;
    }
  }
  const int64_t young_demand = context.state.pending_milli_gpus() - starving_demand;
  Starvation starvation;
  // Starving jobs asking for more than the cluster has are a backlog of
  // their own: serving them one head at a time is FIFO over the longest
  // jobs while the younger ones wait behind each.
  starvation.overloaded =
      IsBacklog(young_demand, cluster_milli_gpus) || starving_demand > cluster_milli_gpus;
  const bool past_hard_bound = oldest && oldest_waited >= config_.starvation_hard_bound;
  if (oldest && (!starvation.overloaded || past_hard_bound)) {
    starvation.head = oldest;
    starvation.head_reserves = past_hard_bound;
  }
  return starvation;
}

std::optional<Duration> BerthOrderer::DrainHorizon(const OrderContext& context,
                                                   int64_t cluster_milli_gpus) const {
  if (cluster_milli_gpus <= 0 ||
      IsBacklog(context.state.pending_milli_gpus(), cluster_milli_gpus)) {
    return std::nullopt;  // a backlog: the order's job is to cut waits
  }
  const double cluster = static_cast<double>(cluster_milli_gpus);
  // Outstanding work in milli-GPU-seconds. Full cycles only: the walk is as
  // long as the queue, which is short here, plus the running jobs, whose
  // ends a full cycle plans from anyway.
  double work = 0;
  for (const JobIndex* jobs : {&context.state.pending(), &context.state.running()}) {
    for (const auto& [id, job] : *jobs) {
      work += context.runtimes.Remaining(*job, context.now).seconds() *
              static_cast<double>(job->spec.total_gpu().value());
    }
  }
  return Duration::Micros(std::llround(work / cluster * 1e6));
}

bool BerthOrderer::KeepsGuarantee(const Job& job, const Starvation& starvation, Time now) const {
  return job.guaranteed &&
         (!starvation.overloaded || Waited(job, now) >= config_.starvation_hard_bound);
}

int64_t BerthOrderer::Score(const Job& job, const OrderContext& context) const {
  const FairShare& fair_share = *context.fair_share;
  const double gpus = std::max(job.spec.gpus(), 0.001);
  const Duration size = config_.size == SizeMeasure::kGittinsRank
                            ? context.runtimes.Rank(job, context.now)
                            : context.runtimes.Remaining(job, context.now);
  const double remaining = size.seconds() * gpus;
  const double penalty =
      std::exp2(config_.user_fair_share_weight * fair_share.UserExponent(job.spec.user) +
                config_.queue_fair_share_weight * fair_share.QueueExponent(job.spec.queue));
  const double aging = 1.0 + Waited(job, context.now).seconds() / config_.aging.seconds();
  // Milli-GPU-seconds, rounded once: ordering never compares doubles.
  return static_cast<int64_t>(std::llround(remaining * penalty / aging * 1000.0));
}

int64_t BerthOrderer::RemainingWork(const Job& job, const OrderContext& context) {
  return static_cast<int64_t>(std::llround(context.runtimes.Remaining(job, context.now).seconds() *
                                           static_cast<double>(job.spec.total_gpu().value())));
}

Duration BerthOrderer::Waited(const Job& job, Time now) {
  return Max(Duration::Zero(), (now - job.spec.submit_time) - job.RunTime(now));
}

void BerthOrderer::Keys(std::span<const Job* const> jobs, const OrderContext& context,
                        std::vector<OrderKey>& keys) const {
  BERTH_CHECK(context.fair_share != nullptr);
  // A pending job needs the starvation pass (is it the head?), as does a
  // guaranteed run (does the guarantee hold?); a batch of other runs (the
  // victims a preemptive cycle weighs) does not, and skips the pass over
  // the queue. Only pending jobs can be drain-long, and only in a cycle
  // that may read every live job.
  const bool any_pending =
      std::any_of(jobs.begin(), jobs.end(), [](const Job* job) { return !job->running(); });
  const bool needs_starvation =
      any_pending ||
      std::any_of(jobs.begin(), jobs.end(), [](const Job* job) { return job->guaranteed; });
  const int64_t cluster = needs_starvation ? ClusterMilliGpus(context.state) : 0;
  const Starvation starvation = needs_starvation ? FindStarvation(context, cluster) : Starvation{};
  const std::optional<Duration> drain_horizon =
      any_pending && !context.partial ? DrainHorizon(context, cluster) : std::nullopt;
  keys.clear();
  keys.reserve(jobs.size());
  for (const Job* job : jobs) {
    const int64_t priority = -int64_t{job->spec.priority};
    if (job->running()) {
      // Started as the head, guarantee in force: ahead of everyone of its
      // class, so never a victim.
      keys.push_back(KeepsGuarantee(*job, starvation, context.now)
                         ? OrderKey{priority, kHeadClass, std::numeric_limits<int64_t>::min()}
                         : OrderKey{priority, kScoredClass, Score(*job, context)});
    } else if (job->spec.id == starvation.head) {
      keys.push_back({priority, starvation.head_reserves ? kReservingHeadClass : kHeadClass,
                      job->spec.submit_time.micros()});
    } else if (drain_horizon && job->spec.total_gpu().value() > 0 &&
               context.runtimes.Remaining(*job, context.now) >= *drain_horizon) {
      keys.push_back({priority, kDrainLongClass, -RemainingWork(*job, context)});
    } else {
      keys.push_back({priority, kScoredClass, Score(*job, context)});
    }
  }
}

std::optional<Time> BerthOrderer::NextKeyChange(const OrderContext& context) const {
  std::optional<Time> next;
  auto consider = [&](Time at) {
    if (at > context.now) KeepEarliest(next, at);
  };
  for (const auto& [id, job] : context.state.pending()) {
    const Duration waited = Waited(*job, context.now);
    for (const Duration bound : {config_.starvation_bound, config_.starvation_hard_bound}) {
      if (waited < bound) consider(context.now + (bound - waited));
    }
  }
  for (const auto& [id, job] : context.state.running()) {
    const Duration predicted = context.runtimes.Expected(*job);
    const Duration ran = job->RunTime(context.now);
    if (ran < predicted) consider(context.now + (predicted - ran) + Duration::Micros(1));
  }
  return next;
}

}  // namespace berth::core
