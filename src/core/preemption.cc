// The preemptive discipline (SRTF, Tiresias' LAS): walk the order, start what
// fits, and let a job that does not fit stop running jobs ordered after it
// when that makes room. Jobs that still do not fit are skipped, not waited on.
//
// Victim choice: release candidates from the lowest-ordered up until the job
// fits, then give back every victim it turns out not to need, most valuable
// first. Whole gangs only: a victim's every task is released. Victims must
// be allowed by the policy's PreemptionScope and not started in this cycle.
#include <algorithm>
#include <optional>
#include <span>
#include <vector>

#include "core/cycle.h"
#include "core/placement_memo.h"

namespace berth::core {
namespace {

struct Victim {
  const Job* job;
  OrderKey key;
  GpuTypeId type{};    // gangs never mix models, so one per job
  int64_t gpus = 0;    // whole GPUs it holds
  bool taken = false;  // preempted earlier in this cycle
};

bool OrderedAfter(const Victim& victim, const Candidate& candidate) {
  if (victim.key != candidate.key) return victim.key > candidate.key;
  return victim.job->spec.id > candidate.job->spec.id;
}

// The running jobs the policy may stop, lowest-ordered first, and the GPUs
// the eligible ones hold. A candidate may stop only jobs ordered after it;
// candidates arrive in policy order, so the eligible set is a prefix that
// only shrinks, and a moving boundary keeps the sums exact without rescans.
class VictimPool {
 public:
  explicit VictimPool(const Cycle& cycle) : gpus_by_type_(cycle.work.nodes().type_count(), 0) {
    std::vector<const Job*> running;
    for (const auto& [id, job] : cycle.state.running()) {
      if (cycle.policy.preemption_scope == PreemptionScope::kAny || job->spec.preemptible) {
        running.push_back(job);
      }
    }
    std::vector<OrderKey> keys;
    cycle.policy.orderer->Keys(running, cycle.order_context(), keys);
    victims_.reserve(running.size());
    for (size_t i = 0; i < running.size(); ++i) {
      Victim victim{running[i], keys[i]};
      if (!running[i]->placement.tasks.empty()) {
        victim.type = cycle.work.nodes().type_of(running[i]->placement.tasks.front().node);
      }
      for (const TaskPlacement& task : running[i]->placement.tasks) {
        victim.gpus += CountGpus(task.gpus);
      }
      gpus_by_type_[Index(victim.type)] += victim.gpus;
      victims_.push_back(victim);
    }
    std::sort(victims_.begin(), victims_.end(), [](const Victim& a, const Victim& b) {
      if (a.key != b.key) return a.key > b.key;
      return a.job->spec.id > b.job->spec.id;
    });
    end_ = victims_.size();
  }

  // Drops victims that rank above `candidate` from the eligible prefix.
  void NarrowTo(const Candidate& candidate) {
    while (end_ > 0 && !OrderedAfter(victims_[end_ - 1], candidate)) {
      --end_;
      if (!victims_[end_].taken) Remove(victims_[end_]);
    }
  }
  std::span<Victim> eligible() { return {victims_.data(), end_}; }
  void Take(Victim& victim) {
    victim.taken = true;
    Remove(victim);
  }
  // Whole GPUs held by eligible victims of the request's model (any model
  // when it names none).
  int64_t Gpus(const PlacementRequest& request) const {
    if (request.type) return gpus_by_type_[Index(*request.type)];
    int64_t total = 0;
    for (int64_t gpus : gpus_by_type_) total += gpus;
    return total;
  }

 private:
  void Remove(const Victim& victim) { gpus_by_type_[Index(victim.type)] -= victim.gpus; }

  std::vector<Victim> victims_;
  size_t end_ = 0;
  std::vector<int64_t> gpus_by_type_;
};

int64_t FreeGpus(const Capacity& capacity, const PlacementRequest& request) {
  if (request.type) return capacity.free_gpus_of_type(*request.type);
  int64_t total = 0;
  for (size_t t = 0; t < capacity.nodes().type_count(); ++t) {
    total += capacity.free_gpus_of_type(static_cast<GpuTypeId>(t));
  }
  return total;
}

// Tries to make room for `candidate` by stopping eligible victims. On
// success the chosen victims are released from cycle.work, taken from the
// pool, and returned with the placement; on failure cycle.work is unchanged.
std::optional<std::pair<std::vector<Victim*>, Placement>> SelectVictims(Cycle& cycle,
                                                                        const Candidate& candidate,
                                                                        VictimPool& pool) {
  std::vector<Victim*> released;
  std::optional<Placement> placement;
  for (Victim& victim : pool.eligible()) {
    if (victim.taken) continue;
    if (candidate.request.type && victim.type != *candidate.request.type) continue;
    cycle.work.Release(victim.job->placement);
    released.push_back(&victim);
    placement = Place(cycle.work, candidate.request);
    if (placement) break;
  }
  if (!placement) {
    for (auto it = released.rbegin(); it != released.rend(); ++it) {
      cycle.work.Allocate((*it)->job->placement);
    }
    return std::nullopt;
  }
  // Give back victims that are not needed, highest-ordered first.
  std::vector<Victim*> needed;
  for (auto it = released.rbegin(); it != released.rend(); ++it) {
    cycle.work.Allocate((*it)->job->placement);
    if (std::optional<Placement> without = Place(cycle.work, candidate.request)) {
      placement = std::move(without);
    } else {
      cycle.work.Release((*it)->job->placement);
      needed.push_back(*it);
    }
  }
  for (Victim* victim : needed) pool.Take(*victim);
  return std::make_pair(std::move(needed), std::move(*placement));
}

}  // namespace

void RunPreemptive(Cycle& cycle) {
  VictimPool pool(cycle);
  PlacementMemo free_memo;
  PlacementMemo victims_memo;
  for (Candidate& candidate : cycle.order) {
    if (!free_memo.KnownToFail(candidate.request)) {
      if (std::optional<Placement> placement = Place(cycle.work, candidate.request)) {
        cycle.Start(candidate, std::move(*placement));
        continue;
      }
      free_memo.RecordFailure(candidate.request);
    }
    pool.NarrowTo(candidate);
    // Cheap bound first: free GPUs plus all the eligible victims hold.
    const int64_t need =
        static_cast<int64_t>(candidate.request.shape.whole_gpus()) * candidate.request.tasks;
    if (victims_memo.KnownToFail(candidate.request) ||
        FreeGpus(cycle.work, candidate.request) + pool.Gpus(candidate.request) < need) {
      cycle.Blocked(candidate, cycle.work);
      continue;
    }
    auto chosen = SelectVictims(cycle, candidate, pool);
    if (!chosen) {
      victims_memo.RecordFailure(candidate.request);
      cycle.Blocked(candidate, cycle.work);
      continue;
    }
    std::vector<JobId> preempts;
    for (const Victim* victim : chosen->first) {
      preempts.push_back(victim->job->spec.id);
      cycle.decision.preemptions.push_back(
          Preemption{victim->job->spec.id, candidate.job->spec.id});
    }
    cycle.Start(candidate, std::move(chosen->second), std::move(preempts));
    // Victims may have freed more than the job took.
    free_memo.ClearFailures();
    victims_memo.ClearFailures();
  }
}

}  // namespace berth::core
