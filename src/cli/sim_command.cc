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

#include "cli/command_line.h"
#include "cli/daemon_commands.h"
#include "core/policy.h"
#include "sim/cluster_spec.h"
#include "sim/metrics.h"
#include "sim/packing.h"
#include "sim/packing_report.h"
#include "sim/pai2023.h"
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
  std::string vc_quotas;
  int gpus_per_node = 8;
  std::string gpu_type = "V100";
  std::string from;
  std::string to;
  std::vector<std::string> policies = {"fifo",  "sjf-oracle", "srtf-oracle", "las",
                                       "slurm", "qssf",       "berth",       "berth-gittins"};
  std::string out;
  std::vector<int64_t> restart_cost_s = {7, 30, 60};
  int64_t checkpoint_interval_s = 0;  // 0: work is saved at the instant of a preemption
  std::string preemptible = "all";
  bool json = false;
  bool strict = false;
  bool quiet = false;
  unsigned parallel = 0;
  // Packing mode (--pack): the PAI 2023 pod list (--trace) on a node list.
  std::string nodes_file;
  bool pack = false;
};

// The replay's options that packing does not use, to refuse them by name.
struct ReplayOnlyOptions {
  std::vector<const CLI::Option*> options;
};

constexpr std::string_view kPai2023 = "pai2023";

template <typename T>
T OrFail(Result<T> result) {
  if (!result.ok()) FailCommand("sim", result.status().message());
  return std::move(result).value();
}

sim::TraceLoad LoadTrace(const SimFlags& flags) {
  sim::ReadOptions options;
  options.strict = flags.strict;
  auto parse_time = [](const char* flag, const std::string& text) {
    Result<core::Time> time = sim::ParseTimeArg(text);
    if (!time.ok()) FailCommand("sim", std::string(flag) + ": " + time.status().message());
    return time.value();
  };
  if (!flags.from.empty()) options.filter.from = parse_time("--from", flags.from);
  if (!flags.to.empty()) options.filter.to = parse_time("--to", flags.to);
  const sim::TraceFormat format = OrFail(sim::ParseTraceFormat(flags.format));
  return OrFail(sim::ReadTrace(flags.trace, format, options));
}

std::vector<sim::Partition> LoadPartitions(const SimFlags& flags) {
  if (flags.cluster.empty() == flags.vc_nodes.empty()) {
    FailCommand("sim", "give exactly one of --cluster NODESxGPUSxTYPE or --vc-nodes FILE");
  }
  if (!flags.cluster.empty()) return {OrFail(sim::ParsePool(flags.cluster))};
  return OrFail(sim::ReadVcPartitions(flags.vc_nodes, flags.gpus_per_node, flags.gpu_type));
}

sim::PreemptibleRule ParsePreemptible(const std::string& text) {
  if (text == "all") return sim::PreemptibleRule::kAll;
  if (text == "none") return sim::PreemptibleRule::kNone;
  if (text == "trace") return sim::PreemptibleRule::kAsTraced;
  FailCommand("sim", "--preemptible: expected all, none or trace, got '" + text + "'");
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
                         sim::SimOptions options) {
  // ETAs are what the Berth policy promises users, so its promises are
  // measured; a full explanation pass at every arrival would only slow the
  // reference policies down.
  options.measure_eta = policy == "berth" || policy == "berth-gittins" || policy == "berth-oracle";
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
  if (!out) FailCommand("sim", "cannot write " + path);
  std::fprintf(stderr, "berth sim: wrote %zu files to %s\n", written.size() + 1, dir.c_str());
}

void RunSim(const SimFlags& flags) {
  for (const std::string& name : flags.policies) {
    if (Result<core::Policy> policy = core::MakePolicy(name, core::InSimulation()); !policy.ok()) {
      FailCommand("sim", policy.status().message());
    }
  }
  if (flags.restart_cost_s.size() != 3) {
    FailCommand("sim",
                "--restart-cost: expected three seconds values ONE,NODE,LARGER such as 7,30,60");
  }
  std::vector<sim::Partition> partitions = LoadPartitions(flags);
  const sim::TraceLoad trace = LoadTrace(flags);
  const sim::WorkloadSet set =
      sim::BuildWorkloads(trace.jobs, std::move(partitions), ParsePreemptible(flags.preemptible));
  ReportInput(trace, set);

  sim::SimOptions options;
  options.restart_cost = core::RestartCostModel{core::Duration::Seconds(flags.restart_cost_s[0]),
                                                core::Duration::Seconds(flags.restart_cost_s[1]),
                                                core::Duration::Seconds(flags.restart_cost_s[2])};
  if (flags.checkpoint_interval_s < 0) {
    FailCommand("sim", "--checkpoint-interval: must be 0 or more seconds, got " +
                           std::to_string(flags.checkpoint_interval_s));
  }
  if (flags.checkpoint_interval_s > 0) {
    options.checkpoint_interval = core::Duration::Seconds(flags.checkpoint_interval_s);
  }
  if (!flags.vc_quotas.empty()) {
    if (!flags.vc_nodes.empty())
      FailCommand("sim", "--vc-quotas: team queues share one pool; use --cluster");
    int64_t gpus = 0;
    for (const core::NodeSpec& node : set.workloads.front().partition.nodes) {
      gpus += static_cast<int64_t>(node.gpus.size());
    }
    options.queues = OrFail(sim::ReadVcQuotas(flags.vc_quotas, gpus));
  }
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
  nlohmann::json summary_json = nlohmann::json::array();
  for (const sim::SimResult& result : results) {
    summaries.push_back(sim::Summarize(result));
    summary_json.push_back(sim::ToJson(summaries.back()));
  }
  if (flags.json) {
    std::printf("%s\n",
                (summary_json.size() == 1 ? summary_json[0] : summary_json).dump(2).c_str());
  } else {
    std::printf("%s", sim::FormatTable(summaries).c_str());
  }
  if (!flags.out.empty()) WriteOut(flags.out, results, summary_json);
}

// --- packing mode -------------------------------------------------------------

// Bad combinations of the packing flags, each named.
void CheckPackFlags(const SimFlags& flags, const ReplayOnlyOptions& replay_only) {
  const bool pai = flags.format == kPai2023;
  if (flags.pack && !pai) {
    FailCommand("sim",
                "--pack: needs --format pai2023 (packing reads the PAI 2023 pod and node lists)");
  }
  if (pai && !flags.pack) {
    FailCommand(
        "sim", "--format pai2023: needs --pack (the PAI 2023 pod list has no run times to replay)");
  }
  if (!flags.nodes_file.empty() && !flags.pack)
    FailCommand("sim", "--nodes-file: only used with --pack");
  if (!flags.pack) return;
  if (flags.nodes_file.empty())
    FailCommand("sim", "--pack: needs --nodes-file FILE (the PAI 2023 node list)");
  for (const CLI::Option* option : replay_only.options) {
    if (option->count() > 0) {
      FailCommand(
          "sim", option->get_name() +
                     ": not used with --pack (it compares the placement rules best-fit and berth)");
    }
  }
}

template <typename Item>
std::string Accounting(const sim::Pai2023Load<Item>& load, std::string_view what) {
  std::string line =
      fmt::format("{} {} rows read, {} {}s", load.rows, what, load.items.size(), what);
  for (const auto& [reason, count] : load.skipped) line += fmt::format("; {} {}", count, reason);
  return line;
}

void ReportPackInput(const sim::Pai2023Load<sim::Pai2023Pod>& pods,
                     const sim::Pai2023Load<sim::Pai2023Node>& nodes,
                     const sim::PackResult& result) {
  std::string line =
      fmt::format("berth sim: {}; {}", Accounting(pods, "pod"), Accounting(nodes, "node"));
  for (const auto& [reason, count] : result.never_fit) {
    line += fmt::format("; {} pods never fit ({})", count, reason);
  }
  std::fprintf(stderr, "%s\n", line.c_str());
  for (const std::string& example : pods.examples) std::fprintf(stderr, "  %s\n", example.c_str());
  for (const std::string& example : nodes.examples) {
    std::fprintf(stderr, "  %s\n", example.c_str());
  }
}

void RunPack(const SimFlags& flags) {
  sim::Pai2023ReadOptions read;
  read.strict = flags.strict;
  const sim::Pai2023Load<sim::Pai2023Pod> pods = OrFail(sim::ReadPai2023Pods(flags.trace, read));
  Result<sim::Pai2023Load<sim::Pai2023Node>> nodes = sim::ReadPai2023Nodes(flags.nodes_file, read);
  if (!nodes.ok()) FailCommand("sim", "--nodes-file: " + nodes.status().message());
  const sim::PackInput input = sim::MakePackInput(nodes->items, pods.items);

  // The two rules are independent runs on the same input: a thread each.
  const std::vector<sim::PackRule> rules = {sim::PackRule::kBestFit, sim::PackRule::kBerth};
  std::vector<std::future<Result<sim::PackResult>>> running;
  for (sim::PackRule rule : rules) {
    sim::PackOptions options;
    options.rule = rule;
    running.push_back(std::async(std::launch::async, sim::Pack, std::cref(input), options));
  }
  std::vector<sim::PackResult> results;
  for (auto& run : running) results.push_back(OrFail(run.get()));
  if (!flags.quiet) ReportPackInput(pods, *nodes, results.front());

  if (flags.json) {
    nlohmann::json pack_json = nlohmann::json::array();
    for (const sim::PackResult& result : results) pack_json.push_back(sim::ToJson(result));
    std::printf("%s\n", pack_json.dump(2).c_str());
  } else {
    std::printf("%s", sim::FormatPackTable(results).c_str());
  }
}

}  // namespace

void AddSimCommand(CLI::App& app) {
  auto flags = std::make_shared<SimFlags>();
  CLI::App* sim = app.add_subcommand("sim", DaemonDescription("sim"));
  sim->add_option("--trace", flags->trace, "Trace file (gzip is read directly)")
      ->required()
      ->check(CLI::ExistingFile);
  sim->add_option("--format", flags->format,
                  "Trace format: philly, itp or csv; pai2023 (a pod list) with --pack")
      ->capture_default_str();
  auto replay_only = std::make_shared<ReplayOnlyOptions>();
  replay_only->options.push_back(sim->add_option(
      "--cluster", flags->cluster,
      "One shared pool: NODESxGPUSxTYPE, e.g. 80x8xP100; groups with node features joined by "
      "'+': 40x8xA100[ib]+8x8xH100[ib,nvlink]"));
  replay_only->options.push_back(sim->add_option(
      "--vc-nodes", flags->vc_nodes, "One partition per virtual cluster from a 'vc,node num' CSV"));
  replay_only->options.push_back(sim->add_option(
      "--vc-quotas", flags->vc_quotas,
      "Team queues on the --cluster pool, one per VC of a 'vc,node num' CSV, guarantees in "
      "proportion to the node counts, borrowing allowed; reports per team"));
  replay_only->options.push_back(
      sim->add_option("--gpus-per-node", flags->gpus_per_node, "GPUs per node with --vc-nodes")
          ->capture_default_str());
  replay_only->options.push_back(
      sim->add_option("--gpu-type", flags->gpu_type, "GPU model with --vc-nodes")
          ->capture_default_str());
  replay_only->options.push_back(
      sim->add_option("--from", flags->from,
                      "First submit time kept (inclusive): YYYY-MM-DD[ HH:MM:SS] UTC or seconds"));
  replay_only->options.push_back(
      sim->add_option("--to", flags->to, "Submit times kept end here (exclusive)"));
  replay_only->options.push_back(
      sim->add_option("--policy", flags->policies, "Policies to compare, comma-separated")
          ->delimiter(',')
          ->capture_default_str());
  replay_only->options.push_back(sim->add_option(
      "--out", flags->out, "Write per-job CSV files, SVG plots and summary.json here"));
  replay_only->options.push_back(
      sim->add_option("--restart-cost", flags->restart_cost_s,
                      "Seconds a restart after preemption costs: 1 GPU, up to 8, more")
          ->delimiter(',')
          ->capture_default_str());
  replay_only->options.push_back(
      sim->add_option("--checkpoint-interval", flags->checkpoint_interval_s,
                      "Seconds of run time between a job's checkpoints: a preempted run loses the "
                      "work since its last one (0: none lost, as if saved when stopped)")
          ->capture_default_str());
  replay_only->options.push_back(sim->add_option("--parallel", flags->parallel,
                                                 "Policies simulated at once (default: cores)"));
  sim->add_option("--nodes-file", flags->nodes_file,
                  "With --pack: the PAI 2023 node list (sn,cpu_milli,memory_mib,gpu,model)");
  sim->add_flag("--pack", flags->pack,
                "Pack the pod list (--trace, --format pai2023) onto --nodes-file until nothing "
                "more fits, under best-fit and berth placement");
  sim->add_option("--preemptible", flags->preemptible,
                  "Which jobs policies that honour the flag may preempt: all (traces do not say; "
                  "assume checkpointing), none, or trace (the CSV column)")
      ->capture_default_str();
  sim->add_flag("--json", flags->json, "Print summaries as JSON (an array for several policies)");
  sim->add_flag("--strict", flags->strict, "Fail on the first bad trace row");
  sim->add_flag("--quiet", flags->quiet, "No progress on stderr");
  sim->callback([flags, replay_only] {
    CheckPackFlags(*flags, *replay_only);
    if (flags->pack) {
      RunPack(*flags);
    } else {
      RunSim(*flags);
    }
  });
}

}  // namespace berth::cli
