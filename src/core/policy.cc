#include "core/policy.h"

#include <array>
#include <functional>

#include "core/orderers.h"

namespace berth::core {
namespace {

struct PolicyEntry {
  std::string_view name;
  std::function<Policy(const PolicyConfig&)> make;
};

Policy Build(std::string_view name, std::unique_ptr<Orderer> orderer, Discipline discipline,
             RuntimeKnowledge knowledge, PreemptionScope scope, const PolicyConfig& config) {
  Policy policy;
  policy.name = std::string(name);
  policy.orderer = std::move(orderer);
  policy.discipline = discipline;
  policy.knowledge = knowledge;
  policy.preemption_scope = scope;
  policy.default_time_limit = config.default_time_limit;
  if (knowledge == RuntimeKnowledge::kUserLimits) {
    policy.runtimes = std::make_shared<UserLimitEstimator>(config.default_time_limit);
  } else if (knowledge == RuntimeKnowledge::kPredicted) {
    policy.predictor = std::make_shared<RuntimePredictor>(config.predictor);
    policy.runtimes = policy.predictor;
  }
  return policy;
}

const std::array<PolicyEntry, 7>& Table() {
  using D = Discipline;
  using K = RuntimeKnowledge;
  using S = PreemptionScope;
  static const std::array<PolicyEntry, 7> kTable = {{
      {"fifo",
       [](const PolicyConfig& c) {
         return Build("fifo", std::make_unique<FifoOrderer>(), D::kStrict, K::kUserLimits,
                      S::kPreemptibleOnly, c);
       }},
      {"sjf-oracle",
       [](const PolicyConfig& c) {
         return Build("sjf-oracle",
                      std::make_unique<ShortestFirstOrderer>(ShortestFirstOrderer::Measure::kTotal),
                      D::kStrict, K::kOracle, S::kPreemptibleOnly, c);
       }},
      {"srtf-oracle",
       [](const PolicyConfig& c) {
         return Build(
             "srtf-oracle",
             std::make_unique<ShortestFirstOrderer>(ShortestFirstOrderer::Measure::kRemaining),
             D::kPreemptive, K::kOracle, S::kAny, c);
       }},
      {"las",
       [](const PolicyConfig& c) {
         return Build("las", std::make_unique<LasOrderer>(c.las_thresholds_gpu_seconds),
                      D::kPreemptive, K::kUserLimits, S::kAny, c);
       }},
      {"slurm",
       [](const PolicyConfig& c) {
         Policy policy = Build("slurm", std::make_unique<MultifactorOrderer>(c.multifactor),
                               D::kBackfill, K::kUserLimits, S::kPreemptibleOnly, c);
         // Slurm's backfill plans with time limits only.
         policy.runtimes = std::make_shared<TimeLimitEstimator>(c.default_time_limit);
         return policy;
       }},
      {"qssf",
       [](const PolicyConfig& c) {
         // Helios' quasi-shortest-service-first: predicted GPU time,
         // non-preemptive, strict order as the Helios artifact's SJF.
         return Build(
             "qssf",
             std::make_unique<ShortestFirstOrderer>(ShortestFirstOrderer::Measure::kTotal,
                                                    ShortestFirstOrderer::Service::kGpuTime),
             D::kStrict, K::kPredicted, S::kPreemptibleOnly, c);
       }},
      {"berth",
       [](const PolicyConfig& c) {
         Policy policy = Build("berth", std::make_unique<BerthOrderer>(c.berth),
                               D::kPreemptiveBackfill, K::kPredicted, S::kPreemptibleOnly, c);
         policy.victim_choice = VictimChoice::kFewestLeastLoss;
         policy.fragmentation_aware = true;
         policy.min_run_time = c.berth_min_run_time;
         return policy;
       }},
  }};
  return kTable;
}

}  // namespace

Result<Policy> MakePolicy(std::string_view name, const PolicyConfig& config) {
  for (const PolicyEntry& entry : Table()) {
    if (entry.name == name) return entry.make(config);
  }
  std::string known;
  for (const PolicyEntry& entry : Table()) {
    if (!known.empty()) known += ", ";
    known += entry.name;
  }
  return InvalidArgument("policy: unknown policy '" + std::string(name) + "' (known: " + known +
                         ")");
}

std::vector<std::string_view> PolicyNames() {
  std::vector<std::string_view> names;
  for (const PolicyEntry& entry : Table()) names.push_back(entry.name);
  return names;
}

}  // namespace berth::core
