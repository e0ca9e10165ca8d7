#include "sim/metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <queue>

#include "common/check.h"
#include "core/eta_interval.h"

namespace berth::sim {

double Percentile(std::vector<double> values, double p) {
  BERTH_CHECK(p > 0 && p <= 100) << p;
  if (values.empty()) return 0;
  const auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  const size_t index = std::max<size_t>(rank, 1) - 1;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(index),
                   values.end());
  return values[index];
}

double FluidSrptAverageJct(const std::vector<JobOutcome>& jobs, int64_t total_gpus) {
  if (jobs.empty() || total_gpus <= 0) return 0;
  struct Arrival {
    double release;
    double processing;  // seconds on a machine as fast as the whole cluster
  };
  std::vector<Arrival> arrivals;
  arrivals.reserve(jobs.size());
  const double origin = jobs.front().submit.seconds();
  for (const JobOutcome& job : jobs) {
    arrivals.push_back(Arrival{job.submit.seconds() - origin, job.duration.seconds() * job.gpus /
                                                                  static_cast<double>(total_gpus)});
  }
  std::sort(arrivals.begin(), arrivals.end(),
            [](const Arrival& a, const Arrival& b) { return a.release < b.release; });

  // Remaining processing and release time, shortest remaining first.
  using Live = std::pair<double, double>;
  std::priority_queue<Live, std::vector<Live>, std::greater<>> live;
  double now = 0;
  double total_flow = 0;
  size_t next = 0;
  while (next < arrivals.size() || !live.empty()) {
    if (live.empty()) now = std::max(now, arrivals[next].release);
    while (next < arrivals.size() && arrivals[next].release <= now) {
      live.emplace(arrivals[next].processing, arrivals[next].release);
      ++next;
    }
    auto [remaining, release] = live.top();
    live.pop();
    const double horizon = next < arrivals.size() ? arrivals[next].release : INFINITY;
    if (now + remaining <= horizon) {
      now += remaining;
      total_flow += now - release;
    } else {
      live.emplace(remaining - (horizon - now), release);
      now = horizon;
    }
  }
  return total_flow / static_cast<double>(arrivals.size());
}

std::optional<double> EtaAccuracy(const std::vector<JobOutcome>& jobs) {
  int64_t promised = 0;
  int64_t kept = 0;
  for (const JobOutcome& job : jobs) {
    if (!job.first_eta) continue;
    ++promised;
    const std::optional<core::Time>& eta = *job.first_eta;
    if (!eta) continue;  // no ETA given counts as a miss
    if (core::EtaKept(job.submit, *eta, job.first_start)) ++kept;
  }
  if (promised == 0) return std::nullopt;
  return static_cast<double>(kept) / static_cast<double>(promised);
}

std::optional<double> EtaIntervalCoverage(const std::vector<JobOutcome>& jobs) {
  int64_t promised = 0;
  int64_t inside = 0;
  for (const JobOutcome& job : jobs) {
    if (!job.first_eta) continue;
    ++promised;
    if (job.first_eta_interval && job.first_eta_interval->Contains(job.first_start)) ++inside;
  }
  if (promised == 0) return std::nullopt;
  return static_cast<double>(inside) / static_cast<double>(promised);
}

std::optional<double> PredictionMdape(const std::vector<JobOutcome>& jobs) {
  std::vector<double> errors;
  for (const JobOutcome& job : jobs) {
    if (!job.predicted || job.duration <= core::Duration::Zero()) continue;
    errors.push_back(std::abs(job.predicted->seconds() - job.duration.seconds()) /
                     job.duration.seconds());
  }
  if (errors.empty()) return std::nullopt;
  return Percentile(std::move(errors), 50);
}

std::vector<TeamSummary> SummarizeTeams(const std::vector<JobOutcome>& jobs) {
  std::map<std::string, TeamSummary> teams;
  for (const JobOutcome& job : jobs) {
    TeamSummary& team = teams[job.queue];
    team.queue = job.queue;
    ++team.jobs;
    team.avg_wait_s += job.wait.seconds();
    team.avg_jct_s += job.jct().seconds();
    const double run = std::max((job.jct() - job.wait).seconds(), 60.0);
    team.avg_slowdown += std::max(1.0, job.jct().seconds() / run);
  }
  std::vector<TeamSummary> out;
  for (auto& [name, team] : teams) {
    const double n = static_cast<double>(team.jobs);
    team.avg_wait_s /= n;
    team.avg_jct_s /= n;
    team.avg_slowdown /= n;
    out.push_back(team);
  }
  return out;
}

double JainIndex(const std::vector<double>& values) {
  double sum = 0;
  double squares = 0;
  for (double value : values) {
    sum += value;
    squares += value * value;
  }
  if (values.empty() || squares == 0) return 1.0;
  return sum * sum / (static_cast<double>(values.size()) * squares);
}

Summary Summarize(const SimResult& result) {
  Summary summary;
  summary.policy = result.policy;
  summary.jobs = static_cast<int64_t>(result.jobs.size());
  summary.events = result.events;
  summary.sim_wall_s = result.wall_seconds;
  if (result.jobs.empty()) return summary;

  std::vector<double> jct;
  std::vector<double> wait;
  jct.reserve(result.jobs.size());
  wait.reserve(result.jobs.size());
  std::vector<double> preemptions;
  preemptions.reserve(result.jobs.size());
  double gpu_seconds = 0;
  double lost_gpu_seconds = 0;
  double restart_gpu_seconds = 0;
  double duration_sum = 0;
  core::Time first_submit = core::Time::Infinite();
  core::Time last_finish = core::Time::Epoch();
  for (const JobOutcome& job : result.jobs) {
    jct.push_back(job.jct().seconds());
    wait.push_back(job.wait.seconds());
    gpu_seconds += (job.jct() - job.wait).seconds() * job.gpus;
    duration_sum += job.duration.seconds();
    summary.preemptions += job.preemptions;
    preemptions.push_back(job.preemptions);
    lost_gpu_seconds += job.lost_work.seconds() * job.gpus;
    restart_gpu_seconds += job.restart_overhead.seconds() * job.gpus;
    first_submit = core::Min(first_submit, job.submit);
    last_finish = core::Max(last_finish, job.finish);
  }
  const double n = static_cast<double>(result.jobs.size());
  summary.avg_jct_s = std::accumulate(jct.begin(), jct.end(), 0.0) / n;
  summary.avg_wait_s = std::accumulate(wait.begin(), wait.end(), 0.0) / n;
  summary.max_wait_s = *std::max_element(wait.begin(), wait.end());
  summary.p50_jct_s = Percentile(jct, 50);
  summary.p99_jct_s = Percentile(jct, 99);
  summary.p50_wait_s = Percentile(wait, 50);
  summary.p99_wait_s = Percentile(wait, 99);
  summary.p999_wait_s = Percentile(wait, 99.9);
  summary.preemptions_per_job = Spread{Percentile(preemptions, 50), Percentile(preemptions, 99),
                                       *std::max_element(preemptions.begin(), preemptions.end())};
  summary.lost_gpu_hours = lost_gpu_seconds / 3600.0;
  summary.restart_gpu_hours = restart_gpu_seconds / 3600.0;
  summary.prediction_mdape = PredictionMdape(result.jobs);
  summary.eta_within_25pct = EtaAccuracy(result.jobs);
  summary.eta_p80_coverage = EtaIntervalCoverage(result.jobs);
  summary.makespan_s = (last_finish - first_submit).seconds();
  if (summary.makespan_s > 0 && result.total_gpus > 0) {
    summary.gpu_utilization =
        gpu_seconds / (static_cast<double>(result.total_gpus) * summary.makespan_s);
  }
  if (result.by_team) {
    summary.teams = SummarizeTeams(result.jobs);
    std::vector<double> slowdowns;
    for (const TeamSummary& team : summary.teams) slowdowns.push_back(team.avg_slowdown);
    summary.jain_fairness = JainIndex(slowdowns);
  }
  summary.lb_avg_jct_s =
      std::max(duration_sum / n, FluidSrptAverageJct(result.jobs, result.total_gpus));
  return summary;
}

}  // namespace berth::sim
