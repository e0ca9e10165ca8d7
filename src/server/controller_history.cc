// What a restarted controller reads back of the runs that ended before it:
// fair share's decayed usage and the runtime predictor's history. Both come
// from the store's usage records, one per run however it ended, so a restart
// forgets neither who used the GPUs nor how long their jobs took; the
// predictor's bursts come back from the records of those runs' jobs, and
// the ETA calibration from their first ETAs and starts.
#include <algorithm>
#include <map>
#include <optional>
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
  return ReplayJobsLocked(run_times);
}

Status Controller::ReplayJobsLocked(const std::map<JobId, core::Duration>& run_times) {
  // Jobs are replayed from the oldest with a run read, or still live,
  // whichever is older: its bursts hear of each submission in submit (id)
  // order and of each first start, as they did live, so a pending job finds
  // the burst-mates that finished before the restart (AddToStateLocked goes
  // on from here for the live ones, and repeats nothing).
  std::optional<JobId> first;
  if (!run_times.empty()) first = run_times.begin()->first;
  store::JobFilter oldest_live;
  oldest_live.live_only = true;
  oldest_live.limit = 1;
  BERTH_ASSIGN_OR_RETURN(std::vector<JobRecord> live, store_.ListJobs(oldest_live));
  if (!live.empty()) first = first ? std::min(*first, live.front().id) : live.front().id;
  if (!first) return Status::Ok();

  // The predictor learns from jobs that succeeded, as EndRunLocked teaches
  // it, in the order they ended: it keeps the most recent per kind.
  struct Finished {
    core::Time end;
    JobId id;
    core::JobSpec spec;
    core::Duration run_time;
  };
  std::vector<Finished> finished;
  // The ETA calibration learns the first ETAs judged since then.
  std::vector<store::FirstEtaRecord> judged_etas;
  store::JobFilter filter;
  filter.after = JobId{core::Value(*first) - 1};
  filter.limit = 1000;
  while (true) {
    BERTH_ASSIGN_OR_RETURN(std::vector<JobRecord> page, store_.ListJobs(filter));
    for (const JobRecord& job : page) {
      if (job.first_eta) judged_etas.push_back(*job.first_eta);
      if (!policy_.predictor) continue;
      core::JobSpec spec = JobSpecOf(job);
      policy_.predictor->Submitted(spec);
      if (job.start_time) policy_.predictor->Started(job.id, *job.start_time);
      if (!job.end_time) continue;  // live: only an ended job has an end time
      auto run_time = run_times.find(job.id);
      if (job.state == JobState::kSucceeded && run_time != run_times.end()) {
        finished.push_back(Finished{*job.end_time, job.id, std::move(spec), run_time->second});
      } else {
        policy_.predictor->Forget(job.id);
      }
    }
    if (page.size() < static_cast<size_t>(filter.limit)) break;
    filter.after = page.back().id;
  }
  std::sort(finished.begin(), finished.end(), [](const Finished& a, const Finished& b) {
    return std::tie(a.end, a.id) < std::tie(b.end, b.id);
  });
  for (const Finished& job : finished) policy_.predictor->Observe(job.spec, job.run_time);
  eta_book_.Learn(std::move(judged_etas));
  return Status::Ok();
}

}  // namespace berth::server
