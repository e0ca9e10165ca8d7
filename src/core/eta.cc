#include "core/eta.h"

#include <set>

#include "common/check.h"

namespace berth::core {

ReleaseSchedule::ReleaseSchedule(const Cycle& cycle) : clock_(cycle.now) {
  std::set<JobId> preempted;
  for (const Preemption& p : cycle.decision.preemptions) preempted.insert(p.job);
  const RuntimeEstimator& runtimes = *cycle.policy.runtimes;
  for (const auto& [id, job] : cycle.state.running()) {
    if (preempted.contains(id)) continue;
    Add(cycle.now + runtimes.Remaining(*job, cycle.now), id, &job->placement);
  }
  for (const JobStart& start : cycle.decision.starts) {
    const Job& job = cycle.state.Get(start.job);
    Add(cycle.now + runtimes.Remaining(job, cycle.now), start.job, &start.placement);
  }
}

void ReleaseSchedule::Add(Time end, JobId job, const Placement* placement) {
  ends_.push(End{end, job, placement});
}

const Placement* ReleaseSchedule::Own(Placement placement) {
  owned_.push_back(std::move(placement));
  return &owned_.back();
}

std::optional<PlannedStart> ReleaseSchedule::AdvanceUntilFits(Capacity& capacity,
                                                              const PlacementRequest& request,
                                                              Time not_before) {
  clock_ = Max(clock_, not_before);
  std::optional<JobId> after;
  while (true) {
    if (std::optional<Placement> placement = Place(capacity, request)) {
      return PlannedStart{clock_, std::move(*placement), after};
    }
    if (ends_.empty()) return std::nullopt;
    const End end = ends_.top();
    ends_.pop();
    capacity.Release(*end.placement);
    clock_ = Max(clock_, end.at);
    after = end.job;
  }
}

void PlanEtas(Cycle& cycle) {
  Capacity plan = cycle.work;
  ReleaseSchedule ends(cycle);
  const RuntimeEstimator& runtimes = *cycle.policy.runtimes;
  Time clock = cycle.now;
  // decision.pending lists the candidates not started, in order, then the
  // jobs that can never fit (which get no ETA).
  size_t next = 0;
  for (const Candidate& candidate : cycle.order) {
    if (candidate.started) continue;
    PendingJob& pending = cycle.decision.pending[next++];
    BERTH_CHECK(pending.job == candidate.job->spec.id);
    if (pending.reason == ReasonCode::kQuota) continue;  // waits for its team, not for GPUs
    std::optional<PlannedStart> start = ends.AdvanceUntilFits(plan, candidate.request, clock);
    if (!start) continue;  // needs nodes that are down or draining
    clock = start->at;
    pending.eta = start->at;
    pending.after_job = start->after_job;
    const Placement* placement = ends.Own(std::move(start->placement));
    plan.Allocate(*placement);
    ends.Add(start->at + runtimes.Remaining(*candidate.job, cycle.now), pending.job, placement);
  }
}

}  // namespace berth::core
