#include "cli/sim_command.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "core/policy.h"
#include "sim/cluster_spec.h"
#include "sim/metrics.h"
#include "sim/plots.h"
#include "sim/report.h"
#include "sim/simulator.h"
#include "sim/trace.h"
#include "sim/workload.h"

namespace berth::cli {
namespace {

struct SimFlags {
  std::string trace;
  std::string format = "csv";
  std::string cluster;
  std::string vc_nodes;
  int gpus_per_node = 8;
  std::string gpu_type = "V100";
  std::string from;
  std::string to;
  std::vector<std::string> policies = {"fifo", "sjf-oracle", "srtf-oracle", "las", "slurm"};
  std::string out;
  std::vector<int64_t> restart_cost_s = {7, 30, 60};
  bool json = false;
  bool strict = false;
  bool quiet = false;
  unsigned parallel = 0;
};

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "berth sim: %s\n", message.c_str());
  std::exit(2);
}

template <typename T>
T OrFail(Result<T> result) {
  if (!result.ok()) Fail(result.status().message());
  return std::move(result).value();
}

sim::TraceLoad LoadTrace(const SimFlags& flags) {
  sim::ReadOptions options;
  options.strict = flags.strict;
  auto parse_time = [](const char* flag, const std::string& text) {
    Result<core::Time> time = sim::ParseTimeArg(text);
    if (!time.ok()) Fail(std::string(flag) + ": " + time.status().message());
    return time.value();
  };
  if (!flags.from.empty()) options.filter.from = parse_time("--from", flags.from);
  if (!flags.to.empty()) options.filter.to = parse_time("--to", flags.to);
  const sim::TraceFormat format = OrFail(sim::ParseTraceFormat(flags.format));
  return OrFail(sim::ReadTrace(flags.trace, format, options));
}

std::vector<sim::Partition> LoadPartitions(const SimFlags& flags) {
  if (flags.cluster.empty() == flags.vc_nodes.empty()) {
    Fail("give exactly one of --cluster NODESxGPUSxTYPE or --vc-nodes FILE");
  }
  if (!flags.cluster.empty()) return {OrFail(sim::ParsePool(flags.cluster))};
  return OrFail(sim::ReadVcPartitions(flags.vc_nodes, flags.gpus_per_node, flags.gpu_type));
}

void ReportInput(const sim::TraceLoad& trace, const sim::WorkloadSet& set) {
  int64_t jobs = 0;
  for (const sim::Workload& workload : set.workloads) {
    jobs += static_cast<int64_t>(workload.jobs.size());
  }
  std::string line = fmt::format("berth sim: {} rows read, {} jobs simulated", trace.rows, jobs);
  for (const auto& [reason, count] : trace.skipped) line += fmt::format("; {} {}", count, reason);
  for (const auto& [reason, count] : set.skipped) line += fmt::format("; {} {}", count, reason);
  std::fprintf(stderr, "%s\n", line.c_str());
  for (const std::string& example : trace.examples) std::fprintf(stderr, "  %s\n", example.c_str());
}

// Runs one policy over every partition and merges the parts.
sim::SimResult RunPolicy(const sim::WorkloadSet& set, const std::string& policy,
                         const sim::SimOptions& options) {
  std::vector<sim::SimResult> parts;
  for (const sim::Workload& workload : set.workloads) {
    parts.push_back(OrFail(sim::Simulate(workload, policy, options)));
  }
  return sim::MergeResults(std::move(parts));
}

// Prints progress at most every few seconds; shared by the policy threads.
class ProgressPrinter {
 public:
  explicit ProgressPrinter(bool enabled) : enabled_(enabled) {}
  void operator()(const sim::SimProgress& progress) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(mutex_);
    if (now - last_ < std::chrono::seconds(3)) return;
    last_ = now;
    const double day = (progress.now - progress.first_submit).seconds() / 86400;
    const double days = (progress.last_submit - progress.first_submit).seconds() / 86400;
    std::fputs(fmt::format("  [{}{}{}] trace day {:.0f} of {:.0f}, {}/{} jobs done\n",
                           progress.policy, progress.partition.empty() ? "" : " ",
                           progress.partition, day, days, progress.finished, progress.total)
                   .c_str(),
               stderr);
  }

 private:
  const bool enabled_;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

void WriteOut(const std::string& dir, const std::vector<sim::SimResult>& results,
              const nlohmann::json& summaries) {
  const std::vector<std::string> written = OrFail(sim::WriteReports(dir, results));
  const std::string path = (std::filesystem::path(dir) / "summary.json").string();
  std::ofstream out(path);
  out << summaries.dump(2) << "\n";
  if (!out) Fail("cannot write " + path);
  std::fprintf(stderr, "berth sim: wrote %zu files to %s\n", written.size() + 1, dir.c_str());
}

void RunSim(const SimFlags& flags) {
  for (const std::string& name : flags.policies) {
    if (Result<core::Policy> policy = core::MakePolicy(name); !policy.ok()) {
      Fail(policy.status().message());
    }
  }
  if (flags.restart_cost_s.size() != 3) {
    Fail("--restart-cost: expected three seconds values ONE,NODE,LARGER such as 7,30,60");
  }
  std::vector<sim::Partition> partitions = LoadPartitions(flags);
  const sim::TraceLoad trace = LoadTrace(flags);
  const sim::WorkloadSet set = sim::BuildWorkloads(trace.jobs, std::move(partitions));
  ReportInput(trace, set);

  sim::SimOptions options;
  options.restart_cost = core::RestartCostModel{core::Duration::Seconds(flags.restart_cost_s[0]),
                                                core::Duration::Seconds(flags.restart_cost_s[1]),
                                                core::Duration::Seconds(flags.restart_cost_s[2])};
  auto progress = std::make_shared<ProgressPrinter>(!flags.quiet);
  options.on_progress = [progress](const sim::SimProgress& p) { (*progress)(p); };

  // Policies are independent runs: one thread each, a few at a time.
  const unsigned parallel =
      flags.parallel > 0 ? flags.parallel : std::max(1u, std::thread::hardware_concurrency());
  std::vector<sim::SimResult> results(flags.policies.size());
  for (size_t begin = 0; begin < flags.policies.size(); begin += parallel) {
    std::vector<std::future<sim::SimResult>> running;
    const size_t end = std::min(flags.policies.size(), begin + parallel);
    for (size_t i = begin; i < end; ++i) {
      running.push_back(std::async(std::launch::async, RunPolicy, std::cref(set),
                                   std::cref(flags.policies[i]), std::cref(options)));
    }
    for (size_t i = begin; i < end; ++i) results[i] = running[i - begin].get();
  }

  std::vector<sim::Summary> summaries;
  nlohmann::json json = nlohmann::json::array();
  for (const sim::SimResult& result : results) {
    summaries.push_back(sim::Summarize(result));
    json.push_back(sim::ToJson(summaries.back()));
  }
  if (flags.json) {
    std::printf("%s\n", (json.size() == 1 ? json[0] : json).dump(2).c_str());
  } else {
    std::printf("%s", sim::FormatTable(summaries).c_str());
  }
  if (!flags.out.empty()) WriteOut(flags.out, results, json);
}

}  // namespace

void AddSimCommand(CLI::App& app) {
  auto flags = std::make_shared<SimFlags>();
  CLI::App* sim = app.add_subcommand(
      "sim", "Replay a cluster trace through the scheduler core and compare policies");
  sim->add_option("--trace", flags->trace, "Trace file (gzip is read directly)")
      ->required()
      ->check(CLI::ExistingFile);
  sim->add_option("--format", flags->format, "Trace format: philly, itp or csv")
      ->capture_default_str();
  sim->add_option("--cluster", flags->cluster, "One shared pool: NODESxGPUSxTYPE, e.g. 80x8xP100");
  sim->add_option("--vc-nodes", flags->vc_nodes,
                  "One partition per virtual cluster from a 'vc,node num' CSV");
  sim->add_option("--gpus-per-node", flags->gpus_per_node, "GPUs per node with --vc-nodes")
      ->capture_default_str();
  sim->add_option("--gpu-type", flags->gpu_type, "GPU model with --vc-nodes")
      ->capture_default_str();
  sim->add_option("--from", flags->from,
                  "First submit time kept (inclusive): YYYY-MM-DD[ HH:MM:SS] UTC or seconds");
  sim->add_option("--to", flags->to, "Submit times kept end here (exclusive)");
  sim->add_option("--policy", flags->policies, "Policies to compare, comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  sim->add_option("--out", flags->out, "Write per-job CSV files, SVG plots and summary.json here");
  sim->add_option("--restart-cost", flags->restart_cost_s,
                  "Seconds a restart after preemption costs: 1 GPU, up to 8, more")
      ->delimiter(',')
      ->capture_default_str();
  sim->add_option("--parallel", flags->parallel, "Policies simulated at once (default: cores)");
  sim->add_flag("--json", flags->json, "Print summaries as JSON (an array for several policies)");
  sim->add_flag("--strict", flags->strict, "Fail on the first bad trace row");
  sim->add_flag("--quiet", flags->quiet, "No progress on stderr");
  sim->callback([flags] { RunSim(*flags); });
}

}  // namespace berth::cli
