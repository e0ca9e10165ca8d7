// The controller's job dependencies (--dependency after/afterok/afterany/
// afternotok and singleton): which ended jobs it remembers, whether a held
// job's dependencies are met, and releasing or cancelling the jobs that
// wait on them.
#include <algorithm>
#include <optional>
#include <vector>

#include "server/controller.h"

namespace berth::server {

using core::JobId;
using core::JobReason;
using core::JobState;
using store::JobRecord;

void Controller::RememberEndedLocked(JobId id, JobState state) {
  dependencies_unchecked_ = true;
  ended_[id] = state;
  while (ended_.size() > options_.ended_kept) {
    ended_forgotten_up_to_ = std::max(ended_forgotten_up_to_, ended_.begin()->first);
    ended_.erase(ended_.begin());
  }
}

bool Controller::KnownJobLocked(JobId id) {
  if (jobs_.contains(id) || ended_.contains(id)) return true;
  // Ids ascend and are never reused, so only an id at or below the last one
  // stored when this server started, or a dropped one, may be an ended job;
  // the store's record tells (a new job is not ended).
  if (id > ended_forgotten_up_to_) return false;
  Result<JobRecord> stored = store_.GetJob(id);
  return stored.ok() && core::IsTerminal(stored->state);
}

void Controller::AddLiveNameLocked(const JobRecord& job) {
  live_by_name_[{job.user, job.request.name}].insert(job.id);
}

void Controller::EraseLiveNameLocked(const JobRecord& job) {
  auto it = live_by_name_.find({job.user, job.request.name});
  if (it == live_by_name_.end()) return;
  it->second.erase(job.id);
  if (it->second.empty()) live_by_name_.erase(it);
}

bool Controller::HasEarlierNamesakeLocked(const JobRecord& job) const {
  auto namesakes = live_by_name_.find({job.user, job.request.name});
  if (namesakes == live_by_name_.end()) return false;
  // Ids ascend with submission: the earlier jobs are those before it. Jobs
  // that ended this pass are still here, in a final state, until committed.
  for (auto it = namesakes->second.begin(); it != namesakes->second.end() && *it < job.id; ++it) {
    if (!core::IsTerminal(jobs_.at(*it).state)) return true;
  }
  return false;
}

Controller::Dependencies Controller::CheckDependenciesLocked(const JobRecord& job) const {
  bool waiting = job.request.singleton && HasEarlierNamesakeLocked(job);
  for (const store::Dependency& dependency : job.request.depends_on) {
    std::optional<JobState> end;
    if (auto it = ended_.find(dependency.job); it != ended_.end()) end = it->second;
    if (!end && !jobs_.contains(dependency.job)) {
      // Ended before this server started, or never existed.
      Result<JobRecord> stored = store_.GetJob(dependency.job);
      end = stored.ok() ? std::optional(stored->state) : std::optional(JobState::kFailed);
    }
    if (!end || !core::IsTerminal(*end)) {
      waiting = true;
      continue;
    }
    const bool ok = *end == JobState::kSucceeded;
    if ((dependency.kind == store::DependencyKind::kAfterOk && !ok) ||
        (dependency.kind == store::DependencyKind::kAfterNotOk && ok)) {
      return Dependencies::kNeverSatisfied;
    }
  }
  return waiting ? Dependencies::kWaiting : Dependencies::kMet;
}

void Controller::ReleaseDependentsLocked(std::vector<JobRecord*>& changed) {
  dependencies_unchecked_ = false;
  // To a fixed point: a cancelled job can doom the jobs that depend on it.
  while (true) {
    std::vector<JobId> cancelled;
    for (auto it = awaiting_dependencies_.begin(); it != awaiting_dependencies_.end();) {
      const JobId id = *it;
      auto live = jobs_.find(id);
      if (live == jobs_.end() || live->second.state != JobState::kHeld ||
          live->second.reason != JobReason::kDependency) {
        it = awaiting_dependencies_.erase(it);  // released, cancelled or ended meanwhile
        continue;
      }
      ++it;
      JobRecord& job = live->second;
      const Dependencies dependencies = CheckDependenciesLocked(job);
      if (dependencies == Dependencies::kMet) {
        job.state = job.request.hold ? JobState::kHeld : JobState::kPending;
        job.reason = job.request.hold ? JobReason::kHeld : JobReason::kNone;
        job.message = job.request.hold ? "held until released" : "";
        if (job.state == JobState::kPending) {
          state_.Release(id);
          arrived_since_full_ = true;
        }
        changed.push_back(&job);
      } else if (dependencies == Dependencies::kNeverSatisfied) {
        cancelled.push_back(id);
      }
    }
    if (cancelled.empty()) return;
    for (JobId id : cancelled) {
      JobRecord& job = jobs_.at(id);
      job.state = JobState::kCancelled;
      job.reason = JobReason::kDependencyNeverSatisfied;
      job.message = "a job it depends on ended the wrong way";
      job.end_time = Now();
      LeaveCoreLocked(id, Now());
      RememberEndedLocked(id, job.state);
      changed.push_back(&job);
    }
  }
}

}  // namespace berth::server
