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
#include <vector>

#include "core/cycle.h"
#include "core/placement_memo.h"

namespace berth::core {
namespace {

struct Victim {
  const Job* job;
  OrderKey key;
  bool taken = false;  // preempted earlier in this cycle
};

bool UsesModel(const Capacity& capacity, const Job& job, const PlacementRequest& request) {
  if (!request.type) return true;
  for (const TaskPlacement& task : job.placement.tasks) {
    if (capacity.nodes().type_of(task.node) == *request.type) return true;
  }
  return false;
}

// Running jobs the policy may stop, lowest-ordered first.
std::vector<Victim> RankVictims(const Cycle& cycle) {
  std::vector<const Job*> running;
  for (const auto& [id, job] : cycle.state.running()) {
    if (cycle.policy.preemption_scope == PreemptionScope::kAny || job->spec.preemptible) {
      running.push_back(job);
    }
  }
  std::vector<OrderKey> keys;
  cycle.policy.orderer->Keys(running, cycle.order_context(), keys);
  std::vector<Victim> victims;
  victims.reserve(running.size());
  for (size_t i = 0; i < running.size(); ++i) victims.push_back(Victim{running[i], keys[i]});
  std::sort(victims.begin(), victims.end(), [](const Victim& a, const Victim& b) {
    if (a.key != b.key) return a.key > b.key;
    return a.job->spec.id > b.job->spec.id;
  });
  return victims;
}

bool OrderedAfter(const Victim& victim, const Candidate& candidate) {
  if (victim.key != candidate.key) return victim.key > candidate.key;
  return victim.job->spec.id > candidate.job->spec.id;
}

// Tries to make room for `candidate` by stopping victims. On success the
// chosen victims are released from cycle.work, marked taken, and returned
// with the placement; on failure cycle.work is unchanged.
std::optional<std::pair<std::vector<Victim*>, Placement>> SelectVictims(
    Cycle& cycle, const Candidate& candidate, std::vector<Victim>& victims) {
  std::vector<Victim*> released;
  std::optional<Placement> placement;
  for (Victim& victim : victims) {
    if (!OrderedAfter(victim, candidate)) break;  // the rest rank above the candidate
    if (victim.taken || !UsesModel(cycle.work, *victim.job, candidate.request)) continue;
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
  for (Victim* victim : needed) victim->taken = true;
  return std::make_pair(std::move(needed), std::move(*placement));
}

// Whole GPUs of the request's model that free capacity plus every eligible
// victim could offer: a cheap bound before searching.
int64_t GpusWithin(const Cycle& cycle, const Candidate& candidate,
                   const std::vector<Victim>& victims) {
  const NodeTable& nodes = cycle.work.nodes();
  int64_t total = 0;
  for (size_t t = 0; t < nodes.type_count(); ++t) {
    const auto type = static_cast<GpuTypeId>(t);
    if (!candidate.request.type || *candidate.request.type == type) {
      total += cycle.work.free_gpus_of_type(type);
    }
  }
  for (const Victim& victim : victims) {
    if (!OrderedAfter(victim, candidate)) break;
    if (victim.taken) continue;
    for (const TaskPlacement& task : victim.job->placement.tasks) {
      if (!candidate.request.type || nodes.type_of(task.node) == *candidate.request.type) {
        total += CountGpus(task.gpus);
      }
    }
  }
  return total;
}

}  // namespace

void RunPreemptive(Cycle& cycle) {
  std::vector<Victim> victims = RankVictims(cycle);
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
    const int64_t need =
        static_cast<int64_t>(candidate.request.shape.whole_gpus()) * candidate.request.tasks;
    if (victims_memo.KnownToFail(candidate.request) ||
        GpusWithin(cycle, candidate, victims) < need) {
      cycle.Blocked(candidate, cycle.work);
      continue;
    }
    auto chosen = SelectVictims(cycle, candidate, victims);
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
