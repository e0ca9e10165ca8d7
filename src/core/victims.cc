#include "core/victims.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/check.h"
#include "core/checkpoint.h"
#include "core/restart_cost.h"

namespace berth::core {
namespace {

bool OrderedAfter(const Victim& victim, const Candidate& candidate) {
  if (victim.key != candidate.key) return victim.key > candidate.key;
  return victim.job->spec.id > candidate.job->spec.id;
}

bool MayStop(const Cycle& cycle, const Job& job) {
  if (job.stopping()) return true;  // already on its way out: claiming it is free
  if (cycle.policy.preemption_scope == PreemptionScope::kPreemptibleOnly && !job.spec.preemptible) {
    return false;
  }
  return cycle.now - job.started >= cycle.policy.min_run_time;
}

int64_t FreeGpus(const Capacity& capacity, const PlacementRequest& request) {
  if (request.type) return capacity.free_gpus_of_type(*request.type);
  int64_t total = 0;
  for (size_t t = 0; t < capacity.nodes().type_count(); ++t) {
    total += capacity.free_gpus_of_type(static_cast<GpuTypeId>(t));
  }
  return total;
}

// Whether stopping the victim frees room the request may use: its model,
// and at least one of its nodes within the request's constraints.
bool Fits(const Victim& victim, const PlacementRequest& request, const NodeTable& nodes) {
  if (victim.taken || (request.type && victim.type != *request.type)) return false;
  if (request.eligibility == nullptr) return true;
  for (const TaskPlacement& task : victim.job->placement.tasks) {
    if (!StaticFilters(nodes, task.node, request)) return true;
  }
  return false;
}

// Whether the run is still within the protection its earlier stops earned
// it (Policy::min_run_growth).
bool ProtectedByItsStops(const Policy& policy, const Job& job, Time now) {
  if (policy.min_run_growth <= 1 || job.preemptions == 0 || job.spec.saves_when_stopped) {
    return false;
  }
  // Capped far beyond any run (a year), so the product stays in range.
  const double protected_micros = std::min(static_cast<double>(policy.min_run_time.micros()) *
                                               std::pow(policy.min_run_growth, job.preemptions),
                                           static_cast<double>(Duration::Days(365).micros()));
  return now - job.started < Duration::Micros(static_cast<int64_t>(protected_micros));
}

// The remaining time the gain rule weighs. Against a stop that loses work a
// candidate weighs what is known of its size: a probe's quantum
// (runtime_predictor.h) is a bet on what its run will tell its burst, and
// the victim's loss is certain. Weighed as quanta against every victim,
// probes lost 7-22% more GPU-hours on the developer traces at 1800 s
// checkpoints (docs/evaluation.md).
Duration GainRemaining(const Cycle& cycle, const Job& job, bool against_a_loss = false) {
  if (!cycle.policy.gain_from_mean) return cycle.policy.runtimes->Remaining(job, cycle.now);
  return against_a_loss ? cycle.policy.runtimes->KnownMeanRemaining(job, cycle.now)
                        : cycle.policy.runtimes->MeanRemaining(job, cycle.now);
}

// Which victims a candidate may stop: the protection earlier stops earn and
// the gain rule (victims.h).
class Pays {
 public:
  // A stop put off until its victim's save is recorded in `deferred_until`
  // (Cycle::deferred_until).
  Pays(const Cycle& cycle, const Candidate& candidate, bool reclaims,
       std::optional<Time>& deferred_until)
      : cycle_(cycle),
        deferred_until_(deferred_until),
        candidate_priority_(candidate.key.primary),
        reclaims_(reclaims),
        gated_(cycle.policy.preemption_gain_ratio > 0 &&
               !cycle.policy.orderer->Guarantees(candidate.key)) {
    if (gated_) {
      auto bar = [&](bool against_a_loss) {
        return Duration::Micros(std::llround(
            cycle.policy.preemption_gain_ratio *
            static_cast<double>(GainRemaining(cycle, *candidate.job, against_a_loss).micros())));
      };
      gain_bar_ = bar(false);
      gain_bar_against_a_loss_ = bar(true);
    }
  }
  bool operator()(const Victim& victim) {
    if (victim.stopping) return true;
    if (reclaims_ && cycle_.quota->Borrowing(victim.job->spec.queue)) return true;
    // A higher priority class is an operator's word, not a bet on sizes.
    if (candidate_priority_ < victim.key.primary) return true;
    // Not even for the starving head: its victims' stops are what earned
    // the protection.
    if (victim.protected_by_stops) {
      refused_ = true;
      return false;
    }
    if (!gated_) return true;
    // A run that saves soon: waiting for its save costs the newcomer less
    // than stopping it now costs the victim (the work since its last save),
    // so the stop waits for the save, and the cycle asks to decide again
    // then (Cycle::deferred_until).
    if (const std::optional<Time> save = victim.next_checkpoint;
        save && *save - cycle_.now < victim.loss) {
      KeepEarliest(deferred_until_, *save);
      refused_ = true;
      return false;
    }
    // A run started under the starvation guarantee lapses under overload so
    // that younger work may pass it where stopping it costs nothing. Stopped
    // at a loss it would come straight back as the starving head, stop
    // others in turn, and lose its work again when the overload returns: on
    // ITP cluster02 with checkpoints every 30 min that loop made 40,526
    // preemptions and lost 24,000 GPU-hours (docs/evaluation.md).
    if (victim.job->guaranteed && victim.loss > Duration::Zero()) {
      refused_ = true;
      return false;
    }
    const Duration bar = victim.loss > Duration::Zero() ? gain_bar_against_a_loss_ : gain_bar_;
    if (bar + victim.loss + victim.restart < victim.remaining) return true;
    refused_ = true;
    return false;
  }
  // Whether the rule kept some victim from being stopped (then a later
  // candidate with the same request may still succeed).
  bool refused() const { return refused_; }

 private:
  const Cycle& cycle_;
  std::optional<Time>& deferred_until_;
  int64_t candidate_priority_;  // OrderKey::primary: lower ranks first
  bool reclaims_;
  bool gated_;
  Duration gain_bar_;                 // ratio x the candidate's remaining
  Duration gain_bar_against_a_loss_;  // the same, what is known of it (GainRemaining)
  bool refused_ = false;
};

// Fewest victims, then least lost work: for a job that fits one node, the
// node where the fewest, cheapest victims make room; for a gang, victims in
// order of least loss. Returns the victims to try, in the order to try them.
std::vector<Victim*> CheapestFirst(const Capacity& capacity, const Candidate& candidate,
                                   std::span<Victim> eligible, Pays& pays) {
  std::vector<Victim*> by_loss;
  for (Victim& victim : eligible) {
    if (Fits(victim, candidate.request, capacity.nodes()) && pays(victim)) {
      by_loss.push_back(&victim);
    }
  }
  std::stable_sort(by_loss.begin(), by_loss.end(), [](const Victim* a, const Victim* b) {
    return std::tie(b->stopping, a->loss) < std::tie(a->stopping, b->loss);
  });
  const int64_t need = candidate.request.TotalWholeGpus();
  if (candidate.request.tasks != 1 || need == 0) return by_loss;

  std::map<NodeId, std::vector<Victim*>> on_node;  // each list in order of loss
  for (Victim* victim : by_loss) {
    for (NodeId node : victim->job->placement.Nodes()) on_node[node].push_back(victim);
  }
  struct Choice {
    size_t count;
    Duration loss;
    NodeId node;
    std::vector<Victim*> victims;
  };
  std::optional<Choice> best;
  for (const auto& [node, victims] : on_node) {
    if (StaticFilters(capacity.nodes(), node, candidate.request)) continue;
    int free = capacity.free_gpu_count(node);
    Choice choice{0, Duration::Zero(), node, {}};
    for (Victim* victim : victims) {
      if (free >= need) break;
      for (const TaskPlacement& task : victim->job->placement.tasks) {
        if (task.node == node) free += CountGpus(task.gpus);
      }
      choice.victims.push_back(victim);
      choice.loss += victim->loss;
      if (!victim->stopping) ++choice.count;  // claiming a stopping job stops no one
    }
    if (free < need) continue;
    if (!best || std::tie(choice.count, choice.loss) < std::tie(best->count, best->loss)) {
      best = std::move(choice);
    }
  }
  return best ? best->victims : std::vector<Victim*>{};
}

std::vector<Victim*> LowestOrderedFirst(const Capacity& capacity, const Candidate& candidate,
                                        std::span<Victim> eligible, Pays& pays) {
  std::vector<Victim*> order;
  for (Victim& victim : eligible) {
    if (Fits(victim, candidate.request, capacity.nodes()) && pays(victim)) {
      order.push_back(&victim);
    }
  }
  return order;
}

// Releases `order` one by one from `capacity` until the candidate fits, then
// gives back every victim it turns out not to need, last tried first, and
// places it by the cycle's rule. On failure `capacity` is as before. Fitting
// does not depend on the rule, so the trials use plain best fit (indexed,
// where the fragmentation rule scans every node).
std::optional<PreemptionPlan> Release(Capacity& capacity, const Candidate& candidate,
                                      const std::vector<Victim*>& order,
                                      const PlaceOptions& place) {
  std::vector<Victim*> released;
  bool fits = false;
  for (Victim* victim : order) {
    capacity.Release(victim->job->placement);
    released.push_back(victim);
    fits = Place(capacity, candidate.request).has_value();
    if (fits) break;
  }
  if (!fits) {
    for (auto it = released.rbegin(); it != released.rend(); ++it) {
      capacity.Allocate((*it)->job->placement);
    }
    return std::nullopt;
  }
  std::vector<Victim*> needed;
  for (auto it = released.rbegin(); it != released.rend(); ++it) {
    capacity.Allocate((*it)->job->placement);
    if (!Place(capacity, candidate.request)) {
      capacity.Release((*it)->job->placement);
      needed.push_back(*it);
    }
  }
  std::optional<Placement> placement = Place(capacity, candidate.request, place);
  BERTH_CHECK(placement.has_value());
  return PreemptionPlan{std::move(needed), std::move(*placement)};
}

}  // namespace

VictimPool::VictimPool(const Cycle& cycle) : gpus_by_type_(cycle.work.nodes().type_count(), 0) {
  std::vector<const Job*> running;
  const JobIndex& candidates = cycle.policy.preemption_scope == PreemptionScope::kPreemptibleOnly
                                   ? cycle.state.running_preemptible()
                                   : cycle.state.running();
  for (const auto& [id, job] : candidates) {
    if (MayStop(cycle, *job)) running.push_back(job);
  }
  std::vector<OrderKey> keys;
  cycle.policy.orderer->Keys(running, cycle.order_context(), keys);
  victims_.reserve(running.size());
  for (size_t i = 0; i < running.size(); ++i) {
    const Job& job = *running[i];
    Victim victim;
    victim.job = &job;
    victim.key = keys[i];
    if (!job.placement.tasks.empty()) {
      victim.type = cycle.work.nodes().type_of(job.placement.tasks.front().node);
    }
    for (const TaskPlacement& task : job.placement.tasks) victim.gpus += CountGpus(task.gpus);
    victim.stopping = job.stopping();
    if (!victim.stopping) {  // a job already stopping loses nothing more
      victim.loss = LossIfStopped(job, cycle.now);
      victim.next_checkpoint = NextCheckpoint(job, cycle.now);
      victim.protected_by_stops = ProtectedByItsStops(cycle.policy, job, cycle.now);
      if (cycle.policy.preemption_gain_ratio > 0) {
        victim.remaining = GainRemaining(cycle, job);
        victim.restart = RestartCost(cycle.policy.restart_cost, job.spec.total_gpu());
      }
    }
    gpus_by_type_[Index(victim.type)] += victim.gpus;
    victims_.push_back(victim);
  }
  std::sort(victims_.begin(), victims_.end(), [](const Victim& a, const Victim& b) {
    if (a.stopping != b.stopping) return a.stopping;
    if (a.key != b.key) return a.key > b.key;
    return a.job->spec.id > b.job->spec.id;
  });
  end_ = victims_.size();
  stopping_ = static_cast<size_t>(
      std::count_if(victims_.begin(), victims_.end(), [](const Victim& v) { return v.stopping; }));
}

void VictimPool::NarrowTo(const Candidate& candidate) {
  while (end_ > stopping_ && !OrderedAfter(victims_[end_ - 1], candidate)) {
    --end_;
    if (!victims_[end_].taken) gpus_by_type_[Index(victims_[end_].type)] -= victims_[end_].gpus;
  }
}

Victim* VictimPool::Same(const Victim& copy) {
  for (Victim& victim : victims_) {
    if (victim.job == copy.job) return &victim;
  }
  BERTH_CHECK(false) << "victim of job " << Value(copy.job->spec.id) << " not in the pool";
  return nullptr;
}

void VictimPool::Take(Victim& victim) {
  victim.taken = true;
  gpus_by_type_[Index(victim.type)] -= victim.gpus;
}

int64_t VictimPool::Gpus(const PlacementRequest& request) const {
  if (request.type) return gpus_by_type_[Index(*request.type)];
  int64_t total = 0;
  for (int64_t gpus : gpus_by_type_) total += gpus;
  return total;
}

std::optional<PreemptionPlan> PlanPreemption(Cycle& cycle, const Candidate& candidate,
                                             std::optional<VictimPool>& lazy_pool,
                                             PlacementMemo& memo, Capacity& capacity) {
  const bool by_order = cycle.policy.orderer->PreemptsByOrder(candidate.key);
  const bool reclaims =
      cycle.quota &&
      cycle.quota->WithinGuarantee(candidate.job->spec.queue, candidate.job->spec.total_gpu());
  if (!by_order && !reclaims) return std::nullopt;
  if (!lazy_pool) lazy_pool.emplace(cycle);
  VictimPool& pool = *lazy_pool;
  pool.NarrowTo(candidate);
  std::span<Victim> eligible = pool.eligible();
  if (!by_order) eligible = pool.stopping();  // reclaim only
  std::vector<Victim> with_reclaim;           // copies: only when reclaim widens the set
  if (reclaims) {
    // The eligible prefix first, then borrowers beyond it, keeping pool order.
    for (Victim& victim : pool.all()) {
      const bool in_prefix = &victim < eligible.data() + eligible.size();
      if (in_prefix || (!victim.stopping && cycle.quota->Borrowing(victim.job->spec.queue))) {
        with_reclaim.push_back(victim);
      }
    }
    eligible = with_reclaim;
  }
  // Cheap bound first: free GPUs plus all the eligible victims hold.
  const int64_t need = candidate.request.TotalWholeGpus();
  int64_t offered = FreeGpus(capacity, candidate.request);
  if (reclaims) {
    for (const Victim& victim : eligible) {
      if (Fits(victim, candidate.request, capacity.nodes())) offered += victim.gpus;
    }
  } else {
    offered += pool.Gpus(candidate.request);
  }
  if (memo.KnownToFail(candidate.request) || offered < need) return std::nullopt;
  Pays pays(cycle, candidate, reclaims, cycle.deferred_until);
  std::vector<Victim*> order = cycle.policy.victim_choice == VictimChoice::kFewestLeastLoss
                                   ? CheapestFirst(capacity, candidate, eligible, pays)
                                   : LowestOrderedFirst(capacity, candidate, eligible, pays);
  if (reclaims) {
    // Point back at the pool's victims, so taking them marks the pool.
    for (Victim*& victim : order) victim = pool.Same(*victim);
  }
  std::optional<PreemptionPlan> plan = Release(capacity, candidate, order, cycle.place);
  // A later candidate with the same request may stop more (its order's
  // victims) than reclaim alone offered here.
  // The gain rule depends on the candidate's own remaining time, not only
  // its request: a refusal is not remembered.
  if (!plan && by_order && !pays.refused()) memo.RecordFailure(candidate.request);
  return plan;
}

void CommitPreemption(Cycle& cycle, Candidate& candidate, VictimPool& pool, PreemptionPlan plan) {
  std::vector<JobId> preempts;
  for (Victim* victim : plan.victims) {
    pool.Take(*victim);
    if (cycle.quota) cycle.quota->Remove(victim->job->spec.queue, victim->job->spec.total_gpu());
    if (cycle.user_limits) cycle.user_limits->Remove(victim->job->spec);
    cycle.array_throttle.Remove(victim->job->spec);
    preempts.push_back(victim->job->spec.id);
    if (victim->stopping) continue;  // asked already; the start waits for it all the same
    cycle.decision.preemptions.push_back(Preemption{victim->job->spec.id, candidate.job->spec.id});
  }
  cycle.Start(candidate, std::move(plan.placement), std::move(preempts));
}

bool StartByPreempting(Cycle& cycle, Candidate& candidate, std::optional<VictimPool>& pool,
                       PlacementMemo& memo) {
  std::optional<PreemptionPlan> plan = PlanPreemption(cycle, candidate, pool, memo, cycle.work);
  if (!plan) return false;
  CommitPreemption(cycle, candidate, *pool, std::move(*plan));
  return true;
}

}  // namespace berth::core
