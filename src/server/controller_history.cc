// What a restarted controller reads back of the runs that ended before it:
// fair share's decayed usage and the runtime predictor's history. Both come
// from the store's usage records, one per run however it ended, so a restart
// forgets neither who used the GPUs nor how long their jobs took.
#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "server/controller.h"

namespace berth::server {

using core::JobId;
using core::JobState;
using store::JobRecord;

namespace {

// How far back a restart reads: 2^-10 of a run's fair-share weight is left
// after ten half-lives, and the predictor keeps at most a few hundred recent
// run times per kind of job (PredictorConfig::history).
constexpr int64_t kHistoryHalfLives = 10;

}  // namespace

Status Controller::ReadHistoryLocked(core::Time now, std::map<JobId, core::Duration>& run_times) {
  const core::Duration span = options_.cluster.usage_half_life * kHistoryHalfLives;
  BERTH_ASSIGN_OR_RETURN(std::vector<store::UsageRecord> runs, store_.ListUsage(now - span, now));
  for (const store::UsageRecord& run : runs) {
    state_.AddEndedRun(run.user, run.queue, run.gpus, run.start, run.end);
    core::Duration& total = run_times[run.job];
    total = total + (run.end - run.start);
  }
  if (!policy_.predictor || run_times.empty()) return Status::Ok();
  return RelearnRunTimesLocked(run_times);
}

Status Controller::RelearnRunTimesLocked(const std::map<JobId, core::Duration>& run_times) {
  // The predictor learns from jobs that succeeded, as EndRunLocked teaches
  // it, in the order they ended: it keeps the most recent per kind.
  struct Finished {
    core::Time end;
    JobId id;
    core::JobSpec spec;
    core::Duration run_time;
  };
  std::vector<Finished> finished;
  store::JobFilter filter;
  filter.state = JobState::kSucceeded;
  filter.after = JobId{core::Value(run_times.begin()->first) - 1};
  filter.limit = 1000;
  while (true) {
    BERTH_ASSIGN_OR_RETURN(std::vector<JobRecord> page, store_.ListJobs(filter));
    for (const JobRecord& job : page) {
      auto run_time = run_times.find(job.id);
      if (run_time == run_times.end() || !job.end_time) continue;
      finished.push_back(Finished{*job.end_time, job.id, JobSpecOf(job), run_time->second});
    }
    if (page.size() < static_cast<size_t>(filter.limit)) break;
    filter.after = page.back().id;
  }
  std::sort(finished.begin(), finished.end(), [](const Finished& a, const Finished& b) {
    return std::tie(a.end, a.id) < std::tie(b.end, b.id);
  });
  for (const Finished& job : finished) policy_.predictor->Observe(job.spec, job.run_time);
  return Status::Ok();
}

}  // namespace berth::server
