#include "core/policy.h"

#include <array>
#include <functional>

#include "core/orderers.h"

namespace berth::core {
namespace {

// Where a policy may run: oracle policies read true durations.
enum class Runs { kAnywhere, kSimulationOnly };

struct PolicyEntry {
  std::string_view name;
  Runs runs;
  std::function<Policy(const PolicyConfig&)> make;
};

Policy Build(std::string_view name, std::unique_ptr<Orderer> orderer, Discipline discipline,
             RuntimeKnowledge knowledge, PreemptionScope scope, const PolicyConfig& config) {
  Policy policy;
  policy.name = std::string(name);
  policy.orderer = std::move(orderer);
  policy.discipline = discipline;
  policy.knowledge = knowledge;
  // Live, no job is stopped that did not agree to be: the reference
  // simulators' "any job" is a property of their experiments, not a promise
  // a server can break.
  policy.preemption_scope =
      config.deployment == Deployment::kLive ? PreemptionScope::kPreemptibleOnly : scope;
  policy.default_time_limit = config.default_time_limit;
  policy.restart_cost = config.restart_cost;
  policy.eta_replays = config.eta_replays;
  if (knowledge == RuntimeKnowledge::kUserLimits) {
    policy.runtimes = std::make_shared<UserLimitEstimator>(config.default_time_limit);
  } else if (knowledge == RuntimeKnowledge::kPredicted) {
    policy.predictor = std::make_shared<RuntimePredictor>(config.predictor);
    policy.runtimes = policy.predictor;
  }
  return policy;
}

// The Berth policy: its orderer, preemption with EASY backfill, least-loss
// victims, fragmentation-aware placement, a minimum run before a preemption.
Policy BerthPolicy(std::string_view name, const BerthOrderConfig& order, const PolicyConfig& c,
                   RuntimeKnowledge knowledge = RuntimeKnowledge::kPredicted) {
  Policy policy =
      Build(name, std::make_unique<BerthOrderer>(order), Discipline::kPreemptiveBackfill, knowledge,
            PreemptionScope::kPreemptibleOnly, c);
  policy.victim_choice = VictimChoice::kFewestLeastLoss;
  policy.fragmentation_aware = true;
  policy.min_run_time = c.berth_min_run_time;
  policy.min_run_growth = c.berth_min_run_growth;
  policy.preemption_gain_ratio = c.berth_preemption_gain_ratio;
  policy.gain_from_mean = c.berth_gain_from_mean;
  return policy;
}

const std::array<PolicyEntry, 9>& Table() {
  using D = Discipline;
  using K = RuntimeKnowledge;
  using S = PreemptionScope;
  static const std::array<PolicyEntry, 9> kTable = {{
      {"fifo", Runs::kAnywhere,
       [](const PolicyConfig& c) {
         return Build("fifo", std::make_unique<FifoOrderer>(), D::kStrict, K::kUserLimits,
                      S::kPreemptibleOnly, c);
       }},
      {"sjf-oracle", Runs::kSimulationOnly,
       [](const PolicyConfig& c) {
         return Build("sjf-oracle",
                      std::make_unique<ShortestFirstOrderer>(ShortestFirstOrderer::Measure::kTotal),
                      D::kStrict, K::kOracle, S::kPreemptibleOnly, c);
       }},
      {"srtf-oracle", Runs::kSimulationOnly,
       [](const PolicyConfig& c) {
         return Build(
             "srtf-oracle",
             std::make_unique<ShortestFirstOrderer>(ShortestFirstOrderer::Measure::kRemaining),
             D::kPreemptive, K::kOracle, S::kAny, c);
       }},
      {"las", Runs::kAnywhere,
       [](const PolicyConfig& c) {
         return Build("las", std::make_unique<LasOrderer>(c.las_thresholds_gpu_seconds),
                      D::kPreemptive, K::kUserLimits, S::kAny, c);
       }},
      {"slurm", Runs::kAnywhere,
       [](const PolicyConfig& c) {
         Policy policy = Build("slurm", std::make_unique<MultifactorOrderer>(c.multifactor),
                               D::kBackfill, K::kUserLimits, S::kPreemptibleOnly, c);
         // Slurm's backfill plans with time limits only.
         policy.runtimes = std::make_shared<TimeLimitEstimator>(c.default_time_limit);
         return policy;
       }},
      {"qssf", Runs::kAnywhere,
       [](const PolicyConfig& c) {
         // Helios' quasi-shortest-service-first: predicted GPU time,
         // non-preemptive, strict order as the Helios artifact's SJF.
         return Build(
             "qssf",
             std::make_unique<ShortestFirstOrderer>(ShortestFirstOrderer::Measure::kTotal,
                                                    ShortestFirstOrderer::Service::kGpuTime),
             D::kStrict, K::kPredicted, S::kPreemptibleOnly, c);
       }},
      {"berth", Runs::kAnywhere,
       [](const PolicyConfig& c) { return BerthPolicy("berth", c.berth, c); }},
      {"berth-gittins", Runs::kAnywhere,
       [](const PolicyConfig& c) {
         // Ranks by the Gittins index of sizes learned per class (issue 30,
         // item 1). Now berth's default too; the name stays for configs
         // that chose it.
         BerthOrderConfig order = c.berth;
         order.size = SizeMeasure::kGittinsRank;
         return BerthPolicy("berth-gittins", order, c);
       }},
      {"berth-oracle", Runs::kSimulationOnly,
       [](const PolicyConfig& c) {
         // Berth's rules told every job's true size: what is left between
         // it and srtf-oracle is what the rules cost (starvation bounds,
         // aging, the gain rule); between it and berth, what predicting
         // sizes costs (docs/evaluation.md).
         return BerthPolicy("berth-oracle", c.berth, c, K::kOracle);
       }},
  }};
  return kTable;
}

bool Offered(const PolicyEntry& entry, Deployment deployment) {
  return deployment == Deployment::kSimulation || entry.runs == Runs::kAnywhere;
}

std::string Names(Deployment deployment) {
  std::string names;
  for (const PolicyEntry& entry : Table()) {
    if (!Offered(entry, deployment)) continue;
    if (!names.empty()) names += ", ";
    names += entry.name;
  }
  return names;
}

}  // namespace

Result<Policy> MakePolicy(std::string_view name, const PolicyConfig& config) {
  for (const PolicyEntry& entry : Table()) {
    if (entry.name != name) continue;
    if (!Offered(entry, config.deployment)) {
      return InvalidArgument("policy: '" + std::string(name) +
                             "' reads true job durations, which only the simulator knows; live "
                             "policies: " +
                             Names(config.deployment));
    }
    return entry.make(config);
  }
  return InvalidArgument("policy: unknown policy '" + std::string(name) +
                         "' (known: " + Names(config.deployment) + ")");
}

std::vector<std::string_view> PolicyNames(Deployment deployment) {
  std::vector<std::string_view> names;
  for (const PolicyEntry& entry : Table()) {
    if (Offered(entry, deployment)) names.push_back(entry.name);
  }
  return names;
}

}  // namespace berth::core
