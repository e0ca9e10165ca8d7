// Named scheduling policies, built once from config into a fixed pipeline:
// an orderer (who goes first) and a discipline (what happens when the job at
// the front does not fit). Selected by name through the table in policy.cc;
// nothing registers itself.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "core/berth_orderer.h"
#include "core/discipline.h"
#include "core/multifactor_orderer.h"
#include "core/orderer.h"
#include "core/restart_cost.h"
#include "core/runtime_estimator.h"
#include "core/runtime_predictor.h"
#include "core/time.h"

namespace berth::core {

// Which runtime knowledge drives the policy.
enum class RuntimeKnowledge {
  kUserLimits,  // what users declared; MakePolicy installs the estimator
  kPredicted,   // history of finished jobs; MakePolicy installs a predictor
  kOracle,      // true durations: the simulator installs an oracle estimator
};

// Which running jobs a preemptive policy may stop.
enum class PreemptionScope {
  kPreemptibleOnly,  // only jobs submitted as preemptible
  kAny,              // any job, as the reference SRTF and Tiresias simulators do
};

// How a preemptive policy picks among the jobs it may stop.
enum class VictimChoice {
  kLowestOrderedFirst,  // the reference simulators' rule
  kFewestLeastLoss,     // fewest victims, then least work lost
};

// Where a policy runs. Live is the default so that whatever builds a policy
// without saying gets the safe one.
enum class Deployment {
  // The server: oracle policies are refused (they read true durations, which
  // only a simulator knows), and no policy stops a job that was not
  // submitted as preemptible, whatever its reference simulator did.
  kLive,
  // The simulator: reference policies behave as their papers' simulators do
  // (srtf-oracle and las may stop any job).
  kSimulation,
};

struct PolicyConfig {
  Deployment deployment = Deployment::kLive;
  // The limit assumed for jobs without one (a partition maximum). 60 days is
  // above every job in the shipped traces.
  Duration default_time_limit = Duration::Days(60);
  // Tiresias 2D-LAS queue thresholds in GPU-seconds (the Lucid artifact's).
  std::vector<double> las_thresholds_gpu_seconds = {18000};
  MultifactorWeights multifactor;
  PredictorConfig predictor;
  BerthOrderConfig berth;
  // The Berth policy does not stop a job again before it ran this long.
  Duration berth_min_run_time = Duration::Minutes(10);
  // Each earlier stop of a job multiplies that minimum by this
  // (Policy::min_run_growth). 1.2: a job stopped 20 times is granted 6.4 h,
  // 40 times 10 days; 1.5 and 2 cost the crowded ITP clusters more than
  // they saved Philly (docs/evaluation.md).
  double berth_min_run_growth = 1.2;
  // The Berth policy stops a running job for a newcomer only when it pays
  // (victims.h, Policy::preemption_gain_ratio), weighing means over the
  // learned sizes. 4, not 1: a victim is delayed by more than the
  // newcomer's run, it waits its turn in the queue again; with 1 and 2 the
  // policy still thrashed with real checkpoint losses (docs/evaluation.md).
  double berth_preemption_gain_ratio = 4.0;
  bool berth_gain_from_mean = true;
  // What a restart costs, as the policy weighs it (the simulator's
  // --restart-cost).
  RestartCostModel restart_cost;
  // How many times the ETA plan replays the discipline, each time on run
  // times drawn from what the estimator knows of them (Policy::eta_replays).
  int32_t eta_replays = 9;
};

struct Policy {
  std::string name;
  std::unique_ptr<Orderer> orderer;
  Discipline discipline = Discipline::kStrict;
  RuntimeKnowledge knowledge = RuntimeKnowledge::kUserLimits;
  PreemptionScope preemption_scope = PreemptionScope::kPreemptibleOnly;
  VictimChoice victim_choice = VictimChoice::kLowestOrderedFirst;
  // A job is not stopped again before it has run this long (no thrashing).
  Duration min_run_time;
  // Above 1, a run that would lose work when stopped is also protected for
  // min_run_time x growth^(times it was stopped before), except against a
  // higher priority class and quota reclaim (operators' promises). Why: the
  // least-loss victim is the run that restarted last, so without it the
  // same long job was stopped again and again, each time before its first
  // save (Philly Oct-Nov on 60x8 with 30 min checkpoints: one job stopped
  // 347 times, 17,867 GPU-hours lost; docs/evaluation.md). Growing the
  // protection as a multilevel feedback queue grows its quanta bounds a
  // job's stops by the log of its length. A run that saves when stopped
  // loses nothing and keeps the flat minimum.
  double min_run_growth = 1;
  // When above 0, a job ordered ahead stops a running one only if that pays
  // for mean completion time: ratio x the newcomer's expected remaining time,
  // plus the victim's loss (work since its checkpoint) and restart cost, is
  // less than the victim's expected remaining time (victims.h). 0: any job
  // ordered after it may be stopped, as the reference simulators do.
  double preemption_gain_ratio = 0;
  // The rule's remaining times are the estimator's means over learned sizes
  // (RuntimeEstimator::MeanRemaining) rather than its point predictions.
  bool gain_from_mean = false;
  RestartCostModel restart_cost;
  Duration default_time_limit;
  // Single-task jobs are placed by the fragmentation-aware rule of
  // fragmentation.h against the waiting jobs' task shapes (so a small task
  // does not split a node that a waiting large one needs); otherwise, and
  // for gangs, by best fit.
  bool fragmentation_aware = false;
  // The ETA plan replays the discipline this many times, each on run times
  // drawn from the estimator's quantiles (RuntimeEstimator::
  // RemainingQuantiles), and tells each job the median of its starts: one
  // plan on expected ends is right only as often as every end it waits for
  // is near its expectation (eta.cc). Estimators that know no distribution
  // plan once whatever this says, and so does a queue so long that this
  // many replays would cost more than a few plans (eta.h: EtaReplays). At
  // least 1.
  int32_t eta_replays = 1;
  // Never null when Decide runs. Shared because an owner may keep updating a
  // learning estimator between decisions.
  std::shared_ptr<const RuntimeEstimator> runtimes;
  // Set for kPredicted policies (and the same object as `runtimes`): the
  // owner reports every finished job to it with Observe.
  std::shared_ptr<RuntimePredictor> predictor;
};

// `config` as the simulator runs it (Deployment::kSimulation).
inline PolicyConfig InSimulation(PolicyConfig config = {}) {
  config.deployment = Deployment::kSimulation;
  return config;
}

// Builds a policy by name; InvalidArgument names the known ones otherwise,
// and, for Deployment::kLive, refuses the oracle policies naming the live
// ones.
Result<Policy> MakePolicy(std::string_view name, const PolicyConfig& config = {});
// The names MakePolicy accepts for `deployment`, in table order.
std::vector<std::string_view> PolicyNames(Deployment deployment = Deployment::kSimulation);

}  // namespace berth::core
