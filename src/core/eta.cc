#include "core/eta.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <set>
#include <span>

#include "common/check.h"
#include "core/placement_memo.h"

namespace berth::core {
namespace {

// Calls fn(end, job, placement) for the state's running jobs the cycle did
// not preempt, then the cycle's own starts; each ends `Remaining` after the
// cycle's `now`, or, in a cycle that reuses an order, when its full cycle
// expected (Cycle::known_ends) or, for a run started since, when the cycle
// that started it did (RunStart::expected_end). The running jobs, their
// runs' starts and the known ends all ascend by id: one merge, which reads
// a job only for a run with neither plan (started without an estimate) or
// whose planned end has passed. At 10k nodes most runs start between two
// full passes: estimating each of them again read the job's memory in
// every event cycle, more than a third of `Decide` in the server.
template <typename Fn>
void ForEachExpectedEnd(const Cycle& cycle, Fn&& fn) {
  std::set<JobId> preempted;
  for (const Preemption& p : cycle.decision.preemptions) preempted.insert(p.job);
  const RuntimeEstimator& runtimes = *cycle.policy.runtimes;
  const std::vector<ClusterState::RunStart>& runs = cycle.state.run_starts();
  const std::span<const KnownEnd> known =
      cycle.known_ends ? std::span<const KnownEnd>(*cycle.known_ends) : std::span<const KnownEnd>();
  auto next = known.begin();
  size_t i = 0;
  for (const auto& [id, job] : cycle.state.running()) {
    const ClusterState::RunStart& run = runs[i++];
    BERTH_CHECK(run.id == id);
    while (next != known.end() && next->job < id) ++next;
    if (preempted.contains(id)) continue;
    if (next != known.end() && next->job == id && next->started == run.started &&
        next->end > cycle.now) {
      fn(next->end, id, job->placement);
    } else if (cycle.known_ends != nullptr && run.expected_end && *run.expected_end > cycle.now) {
      fn(*run.expected_end, id, job->placement);
    } else {
      fn(cycle.now + runtimes.Remaining(*job, cycle.now), id, job->placement);
    }
  }
  for (const JobStart& start : cycle.decision.starts) {
    fn(cycle.now + *start.expected_remaining, start.job, start.placement);
  }
}

// The longest a run of the job can last: its time limit (the agent stops
// each run there) and the grace after SIGTERM.
std::optional<Duration> Longest(const JobSpec& spec) {
  if (!spec.time_limit) return std::nullopt;
  return *spec.time_limit + spec.grace;
}

// The latest a running job, or one the cycle starts, ends.
std::optional<Time> LatestEnd(const Cycle& cycle, const Job* job) {
  if (job == nullptr) return std::nullopt;
  const std::optional<Duration> longest = Longest(job->spec);
  if (!longest) return std::nullopt;
  return (job->running() ? job->started : cycle.now) + *longest;
}

// The plan again with time limits for run times (PlannedEta::latest), into
// `etas`, from `capacity` as the plan began. Stops after the first job
// without a time limit: no job behind it has a bound.
void PlanLatestStarts(const EtaPlan& plan, Capacity capacity, std::vector<PlannedEta>& etas) {
  ReleaseSchedule ends(plan.now);
  for (const EtaPlan::End& end : plan.ends) {
    if (!end.latest) return;
    ends.Add(*end.latest, end.job, &end.placement);
  }
  Time clock = plan.now;
  for (size_t i = 0; i < plan.queue.size(); ++i) {
    const EtaPlan::Step& step = plan.queue[i];
    std::optional<PlannedStart> start = ends.AdvanceUntilFits(capacity, step.request, clock);
    if (!start) continue;  // needs nodes that are down or draining: no ETA either
    clock = start->at;
    etas[i].latest = start->at;
    if (!step.longest) return;  // its own start is bounded; what it holds up is not
    const Placement* placement = ends.Own(std::move(start->placement));
    capacity.Allocate(*placement);
    ends.Add(start->at + *step.longest, step.job, placement);
  }
}

}  // namespace

ReleaseSchedule::ReleaseSchedule(const Cycle& cycle) : ReleaseSchedule(cycle.now) {
  ends_.reserve(cycle.state.running().size() + cycle.decision.starts.size());
  ForEachExpectedEnd(cycle, [this](Time end, JobId job, const Placement& placement) {
    ends_.push_back(End{end, job, &placement});
  });
  std::make_heap(ends_.begin(), ends_.end(), std::greater<>{});
}

void ReleaseSchedule::Add(Time end, JobId job, const Placement* placement) {
  ends_.push_back(End{end, job, placement});
  std::push_heap(ends_.begin(), ends_.end(), std::greater<>{});
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
    std::pop_heap(ends_.begin(), ends_.end(), std::greater<>{});
    const End end = ends_.back();
    ends_.pop_back();
    capacity.Release(*end.placement);
    clock_ = Max(clock_, end.at);
    after = end.job;
  }
}

std::optional<PlannedStart> ReleaseSchedule::WhenFits(Capacity capacity,
                                                      const PlacementRequest& request,
                                                      Time not_before) const {
  ReleaseSchedule copy(clock_);
  copy.ends_ = ends_;
  return copy.AdvanceUntilFits(capacity, request, not_before);
}

std::optional<ReleaseSchedule::Released> ReleaseSchedule::ReleaseNext(Capacity& capacity) {
  if (ends_.empty()) return std::nullopt;
  Released released;
  do {
    std::pop_heap(ends_.begin(), ends_.end(), std::greater<>{});
    const End end = ends_.back();
    ends_.pop_back();
    capacity.Release(*end.placement);
    clock_ = Max(clock_, end.at);
    released = Released{clock_, end.job};
  } while (!ends_.empty() && ends_.front().at <= clock_);
  return released;
}

std::vector<KnownEnd> KnownEndsOf(const Cycle& cycle) {
  std::vector<KnownEnd> known;
  known.reserve(cycle.state.running().size() + cycle.decision.starts.size());
  const RuntimeEstimator& runtimes = *cycle.policy.runtimes;
  for (const auto& [id, job] : cycle.state.running()) {
    known.push_back(KnownEnd{id, job->started, cycle.now + runtimes.Remaining(*job, cycle.now)});
  }
  for (const JobStart& start : cycle.decision.starts) {
    known.push_back(KnownEnd{start.job, cycle.now, cycle.now + *start.expected_remaining});
  }
  std::sort(known.begin(), known.end(),
            [](const KnownEnd& a, const KnownEnd& b) { return a.job < b.job; });
  return known;
}

int32_t EtaReplays(int32_t wanted, size_t pending) {
  constexpr size_t kReplayedSteps = 200'000;
  const size_t affordable = kReplayedSteps / std::max<size_t>(pending, 1);
  const auto replays =
      static_cast<int32_t>(std::min(static_cast<size_t>(std::max(wanted, 1)), affordable));
  return replays >= 3 ? replays : 1;
}

EtaPlan EtaPlanOf(const Cycle& cycle) {
  auto nodes = std::make_shared<const NodeTable>(cycle.work.nodes());
  Capacity capacity = cycle.work;
  capacity.Rebind(nodes.get());
  EtaPlan plan{cycle.now, cycle.policy.discipline, std::move(nodes), std::move(capacity), {}, {},
               {}};
  plan.eligibility = cycle.resolver.Eligibilities();
  plan.replays = EtaReplays(cycle.policy.eta_replays, cycle.decision.pending.size());
  const RuntimeEstimator& runtimes = *cycle.policy.runtimes;
  const auto quantiles = [&](const Job& job) {
    return plan.replays > 1 ? runtimes.RemainingQuantiles(job, cycle.now, plan.replays)
                            : std::vector<Duration>{};
  };
  plan.ends.reserve(cycle.state.running().size() + cycle.decision.starts.size());
  ForEachExpectedEnd(cycle, [&](Time end, JobId id, const Placement& placement) {
    const Job* job = cycle.state.Find(id);
    plan.ends.push_back({end, id, placement, LatestEnd(cycle, job),
                         job != nullptr ? quantiles(*job) : std::vector<Duration>{}});
  });
  // decision.pending lists the candidates not started, in order, then the
  // jobs that can never fit (which get no ETA).
  size_t next = 0;
  for (const Candidate& candidate : cycle.order) {
    if (candidate.started) continue;
    const PendingJob& pending = cycle.decision.pending[next++];
    BERTH_CHECK(pending.job == candidate.job->spec.id);
    // It waits for its team, its user's other jobs or its array's other
    // elements, not for GPUs.
    if (pending.reason == ReasonCode::kQuota || pending.reason == ReasonCode::kUserLimit ||
        pending.reason == ReasonCode::kArrayLimit) {
      continue;
    }
    plan.queue.push_back({pending.job, candidate.request,
                          runtimes.Remaining(*candidate.job, cycle.now),
                          Longest(candidate.job->spec), quantiles(*candidate.job)});
  }
  return plan;
}

namespace {

// The discipline replayed on expected run times, with no arrivals: at each
// expected end, jobs start in order where they fit; under the backfilling
// disciplines the first that does not gets a reservation and later ones
// start only where they cannot delay it (preemptive_backfill.cc,
// backfill.cc); under kStrict nobody passes it; under kPreemptive anyone
// who fits starts. Planning jobs strictly in order instead gave a small job
// queued behind a large one the large one's start.
//
// Each pass reads only the first kWindow waiting jobs, so that a queue of
// 100,000 costs kWindow per expected end, not 100,000: a deeper job waits
// for its place in the window, as it would behind that many jobs anyway.
//
// Replay r of the plan's `replays` runs each job for the quantile
// (r + a hash of its id) mod replays of its run time, where it has
// quantiles: over the replays each job runs each of its quantiles once (a
// Latin design, so a few replays cover every job's range), and the shift
// by id keeps jobs from all drawing their short ends, or all their long
// ones, in the same replay.
class Replay {
 public:
  static constexpr size_t kWindow = 256;

  // `replay`: which one; none: the plan on expected run times.
  Replay(const EtaPlan& plan, std::optional<size_t> replay, std::vector<PlannedEta>& etas)
      : plan_(plan), replay_(replay), etas_(etas), capacity_(plan.capacity), ends_(plan.now) {
    for (const EtaPlan::End& end : plan.ends) {
      ends_.Add(Draws(end.remaining_quantiles) ? plan.now + Drawn(end.job, end.remaining_quantiles)
                                               : end.at,
                end.job, &end.placement);
    }
    waiting_.reserve(plan.queue.size());
    for (size_t i = 0; i < plan.queue.size(); ++i) waiting_.push_back(i);
  }

  void Run() {
    while (!waiting_.empty()) {
      Pass();
      if (waiting_.empty()) return;
      std::optional<ReleaseSchedule::Released> released = ends_.ReleaseNext(capacity_);
      if (!released) return;  // the rest need nodes that are down or draining
      clock_ = released->at;
      after_ = released->job;
    }
  }

 private:
  // One decision at clock_ over the window.
  void Pass() {
    const size_t window = std::min(kWindow, waiting_.size());
    std::optional<Capacity> shadow;  // free capacity minus the reservation
    PlacementMemo free_memo;
    PlacementMemo shadow_memo;
    bool blocked = false;  // the head does not fit: under kStrict, nobody behind it starts
    size_t kept = 0;
    for (size_t k = 0; k < window; ++k) {
      const size_t i = waiting_[k];
      const EtaPlan::Step& step = plan_.queue[i];
      std::optional<Placement> placement;
      if (blocked) {
        // waits behind the head
      } else if (!shadow) {
        placement = TryPlace(capacity_, step.request, free_memo);
        if (!placement) {
          switch (plan_.discipline) {
            case Discipline::kStrict:
              blocked = true;
              break;
            case Discipline::kPreemptive:
              break;  // jobs behind start wherever they fit, unprotected
            case Discipline::kBackfill:
            case Discipline::kPreemptiveBackfill:
              shadow = ReserveFor(i);
              break;
          }
        }
      } else {
        const bool ends_before = clock_ + RunTime(step) <= reservation_->at;
        placement = ends_before ? TryPlace(capacity_, step.request, free_memo)
                                : TryPlace(*shadow, step.request, shadow_memo);
      }
      if (!placement) {
        waiting_[kept++] = i;
        continue;
      }
      if (shadow) shadow->Reserve(*placement);
      Start(i, std::move(*placement));
    }
    waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(kept),
                   waiting_.begin() + static_cast<std::ptrdiff_t>(window));
  }

  static std::optional<Placement> TryPlace(const Capacity& capacity,
                                           const PlacementRequest& request, PlacementMemo& memo) {
    // Capacity only shrinks within a pass: a failure holds for the pass.
    if (memo.KnownToFail(request)) return std::nullopt;
    std::optional<Placement> placement = Place(capacity, request);
    if (!placement) memo.RecordFailure(request);
    return placement;
  }

  // The shadow for the first job that does not fit: the free capacity with
  // its reservation taken out. The reservation holds while the same job
  // heads the line (what starts around it cannot delay it), so it is
  // planned again only for a new head. nullopt: it never fits (nodes down
  // or draining), so nothing is held for it.
  std::optional<Capacity> ReserveFor(size_t head) {
    if (reserved_for_ != head) {
      reserved_for_ = head;
      reservation_ = ends_.WhenFits(capacity_, plan_.queue[head].request, clock_);
    }
    if (!reservation_) return std::nullopt;
    Capacity shadow = capacity_;
    shadow.Reserve(reservation_->placement);
    return shadow;
  }

  void Start(size_t i, Placement placement) {
    const EtaPlan::Step& step = plan_.queue[i];
    etas_[i].eta = clock_;
    etas_[i].after_job = after_;
    const Placement* owned = ends_.Own(std::move(placement));
    capacity_.Allocate(*owned);
    ends_.Add(clock_ + RunTime(step), step.job, owned);
  }

  Duration RunTime(const EtaPlan::Step& step) const {
    return Draws(step.remaining_quantiles) ? Drawn(step.job, step.remaining_quantiles)
                                           : step.remaining;
  }

  bool Draws(const std::vector<Duration>& quantiles) const {
    return replay_.has_value() && !quantiles.empty();
  }
  Duration Drawn(JobId job, const std::vector<Duration>& quantiles) const {
    // Fibonacci hashing of the id, so that neighbouring ids land apart.
    const uint64_t spread = static_cast<uint64_t>(Value(job)) * 0x9E3779B97F4A7C15ULL >> 32;
    return quantiles[(*replay_ + spread) % quantiles.size()];
  }

  const EtaPlan& plan_;
  const std::optional<size_t> replay_;
  std::vector<PlannedEta>& etas_;
  Capacity capacity_;  // the plan's, as this replay uses it up
  ReleaseSchedule ends_;
  std::vector<size_t> waiting_;  // indices into plan_.queue, in order
  Time clock_ = plan_.now;
  std::optional<JobId> after_;  // whose end brought the clock here
  std::optional<size_t> reserved_for_;
  std::optional<PlannedStart> reservation_;
};

// Whether any run time in the plan has quantiles to draw from.
bool HasQuantiles(const EtaPlan& plan) {
  return std::any_of(plan.ends.begin(), plan.ends.end(),
                     [](const EtaPlan::End& end) { return !end.remaining_quantiles.empty(); }) ||
         std::any_of(plan.queue.begin(), plan.queue.end(),
                     [](const EtaPlan::Step& step) { return !step.remaining_quantiles.empty(); });
}

}  // namespace

std::vector<PlannedEta> PlanEtas(const EtaPlan& plan) {
  std::vector<PlannedEta> etas(plan.queue.size());
  for (size_t i = 0; i < etas.size(); ++i) etas[i].job = plan.queue[i].job;
  const size_t replays = HasQuantiles(plan) ? static_cast<size_t>(std::max(1, plan.replays)) : 1;
  if (replays == 1) {
    Replay(plan, std::nullopt, etas).Run();
  } else {
    // Each job is told the median of its replays' starts (the lower one of
    // an even count), and whose end brought that replay's clock there. A
    // start that falls within a quarter of its wait is right (eta_interval.h):
    // a median of plausible starts is more often near the real one than the
    // start planned on expected ends, which needs every end it waits for to
    // come near its expectation at once.
    std::vector<std::vector<PlannedEta>> runs(replays, etas);
    for (size_t r = 0; r < replays; ++r) Replay(plan, r, runs[r]).Run();
    std::vector<const PlannedEta*> starts;
    starts.reserve(replays);
    for (size_t i = 0; i < etas.size(); ++i) {
      starts.clear();
      for (const std::vector<PlannedEta>& run : runs) {
        if (run[i].eta) starts.push_back(&run[i]);
      }
      if (starts.empty()) continue;  // needs nodes that are down or draining
      const auto median = starts.begin() + static_cast<std::ptrdiff_t>((starts.size() - 1) / 2);
      std::nth_element(starts.begin(), median, starts.end(),
                       [](const PlannedEta* a, const PlannedEta* b) { return *a->eta < *b->eta; });
      etas[i].eta = (*median)->eta;
      etas[i].after_job = (*median)->after_job;
    }
  }
  // The bound's plan, on time limits, is one: it has no draws.
  if (std::all_of(plan.ends.begin(), plan.ends.end(),
                  [](const EtaPlan::End& end) { return end.latest.has_value(); })) {
    PlanLatestStarts(plan, plan.capacity, etas);
  }
  return etas;
}

void PlanEtas(Cycle& cycle) {
  // The planned jobs are a subsequence of decision.pending, in its order.
  std::vector<PendingJob>& pending = cycle.decision.pending;
  size_t at = 0;
  for (const PlannedEta& eta : PlanEtas(EtaPlanOf(cycle))) {
    while (pending[at].job != eta.job) ++at;
    pending[at].eta = eta.eta;
    pending[at].after_job = eta.after_job;
    pending[at].latest_eta = eta.latest;
  }
}

}  // namespace berth::core
