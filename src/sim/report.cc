#include "sim/report.h"

#include <fmt/format.h>

#include <cmath>

namespace berth::sim {

nlohmann::json ToJson(const Summary& s) {
  // Times rounded to milliseconds: more digits than that only add noise.
  auto ms = [](double seconds) { return std::round(seconds * 1000.0) / 1000.0; };
  nlohmann::json json{
      {"policy", s.policy},
      {"jobs", s.jobs},
      {"avg_jct_s", ms(s.avg_jct_s)},
      {"p50_jct_s", ms(s.p50_jct_s)},
      {"p99_jct_s", ms(s.p99_jct_s)},
      {"avg_wait_s", ms(s.avg_wait_s)},
      {"p50_wait_s", ms(s.p50_wait_s)},
      {"p99_wait_s", ms(s.p99_wait_s)},
      {"max_wait_s", ms(s.max_wait_s)},
      {"makespan_s", ms(s.makespan_s)},
      {"gpu_utilization", std::round(s.gpu_utilization * 1e6) / 1e6},
      {"lb_avg_jct_s", ms(s.lb_avg_jct_s)},
      {"preemptions", s.preemptions},
      {"events", s.events},
      {"sim_wall_s", ms(s.sim_wall_s)},
  };
  json["p999_wait_s"] = ms(s.p999_wait_s);
  json["preemptions_per_job"] = {{"p50", s.preemptions_per_job.p50},
                                 {"p99", s.preemptions_per_job.p99},
                                 {"max", s.preemptions_per_job.max}};
  json["lost_gpu_hours"] = std::round(s.lost_gpu_hours * 1e3) / 1e3;
  json["restart_gpu_hours"] = std::round(s.restart_gpu_hours * 1e3) / 1e3;
  if (s.prediction_mdape) json["prediction_mdape"] = std::round(*s.prediction_mdape * 1e4) / 1e4;
  if (s.eta_within_25pct) json["eta_within_25pct"] = std::round(*s.eta_within_25pct * 1e4) / 1e4;
  if (s.eta_p80_coverage) json["eta_p80_coverage"] = std::round(*s.eta_p80_coverage * 1e4) / 1e4;
  if (s.jain_fairness) {
    json["jain_fairness"] = std::round(*s.jain_fairness * 1e4) / 1e4;
    nlohmann::json teams = nlohmann::json::array();
    for (const TeamSummary& team : s.teams) {
      teams.push_back({{"queue", team.queue},
                       {"jobs", team.jobs},
                       {"avg_wait_s", ms(team.avg_wait_s)},
                       {"avg_jct_s", ms(team.avg_jct_s)},
                       {"avg_slowdown", std::round(team.avg_slowdown * 1e3) / 1e3}});
    }
    json["teams"] = std::move(teams);
  }
  return json;
}

std::string FormatTable(const std::vector<Summary>& summaries) {
  std::string out = fmt::format(
      "{:<12} {:>7} {:>10} {:>9} {:>10} {:>10} {:>9} {:>10} {:>10} {:>6} {:>10} {:>7}\n", "policy",
      "jobs", "avg_jct_s", "p50_jct", "p99_jct", "avg_wait_s", "p50_wait", "p99_wait", "max_wait",
      "util", "makespan_d", "jct/lb");
  for (const Summary& s : summaries) {
    out += fmt::format(
        "{:<12} {:>7} {:>10.0f} {:>9.0f} {:>10.0f} {:>10.0f} {:>9.0f} {:>10.0f} {:>10.0f} "
        "{:>6.3f} {:>10.2f} {:>7.2f}\n",
        s.policy, s.jobs, s.avg_jct_s, s.p50_jct_s, s.p99_jct_s, s.avg_wait_s, s.p50_wait_s,
        s.p99_wait_s, s.max_wait_s, s.gpu_utilization, s.makespan_s / 86400.0,
        s.lb_avg_jct_s > 0 ? s.avg_jct_s / s.lb_avg_jct_s : 0.0);
  }
  return out;
}

}  // namespace berth::sim
