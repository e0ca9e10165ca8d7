// Decision-cycle benchmark on synthetic clusters. Prints a table.
//
//   incremental  one event (a running job ends) then Decide with reasons for
//                every pending job; p50/p99 over many cycles, starts applied
//   full pass    Decide with ExplainLevel::kFull, ETAs deferred as the
//                server defers them: order, reservation, reasons and the
//                ETA plan's inputs; median of a few passes
//   plan         the ETA plan of that pass (PlanEtas), which the server
//                runs on its planner thread: an ETA for every pending job
//   event        as incremental, but reusing the order of a full cycle
//                (DecideOptions::reuse, depth 1,000) refreshed every 10
//                cycles, as the server does between its full passes; the
//                refreshing cycles are not counted here
//
// Usage: decide_bench [--quick] [--policy NAME]... [--eta-replays N]
// --eta-replays overrides Policy::eta_replays (the ETA plan's replays).
// --quick runs small sizes only (CI smoke run; timings then mean nothing).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/cluster_state.h"
#include "core/decide.h"
#include "core/eta_plan.h"
#include "core/placer.h"
#include "core/policy.h"

namespace {

using namespace berth::core;  // NOLINT: a benchmark program

struct Size {
  int nodes;
  int pending;
  int incremental_cycles;
  int full_passes;
};

int Pick(std::mt19937& rng, std::initializer_list<int> choices) {
  std::vector<int> v(choices);
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

JobSpec RandomJob(std::mt19937& rng, int64_t id, Time submit) {
  JobSpec spec;
  spec.id = static_cast<JobId>(id);
  spec.user = "u" + std::to_string(rng() % 50);
  spec.queue = "q" + std::to_string(rng() % 8);
  spec.submit_time = submit;
  const int shape = static_cast<int>(rng() % 100);
  if (shape < 85) {
    spec.task.gpu = WholeGpus(Pick(rng, {1, 1, 1, 2, 4}));
  } else if (shape < 95) {
    spec.task.gpu = WholeGpus(8);
  } else {
    spec.task.gpu = WholeGpus(8);
    spec.tasks = Pick(rng, {2, 4});
  }
  spec.time_limit = Duration::Seconds(std::uniform_int_distribution<int>(600, 86400)(rng));
  return spec;
}

// A cluster about 95% busy with `pending` jobs waiting.
void Fill(ClusterState& state, const Size& size, std::mt19937& rng, int64_t& next_id) {
  for (int i = 0; i < size.nodes; ++i) {
    state.AddNode(MakeNodeSpec("node" + std::to_string(i), "H100", 8));
  }
  const int64_t target = static_cast<int64_t>(size.nodes) * 8 * 95 / 100;
  int64_t busy = 0;
  int failures = 0;
  while (busy < target && failures < 100) {
    JobSpec spec = RandomJob(rng, next_id++, Time::FromSeconds(0));
    spec.tasks = 1;
    state.Submit(spec, Time::FromSeconds(0));
    auto placement = Place(state.capacity(), ResolveRequest(state.nodes(), spec).request);
    if (!placement) {
      state.Cancel(spec.id, Time::FromSeconds(0));
      ++failures;
      continue;
    }
    busy += spec.task.whole_gpus();
    state.Start(spec.id, *placement, Time::FromSeconds(0));
  }
  for (int i = 0; i < size.pending; ++i) {
    const JobSpec spec = RandomJob(rng, next_id++, Time::FromSeconds(1 + i / 10));
    state.Submit(spec, spec.submit_time);
  }
}

// One second of a busy cluster: a random running job ends, a new job arrives.
void NextEvent(ClusterState& state, std::mt19937& rng, int64_t& next_id, Time now) {
  const auto& running = state.running();
  if (!running.empty()) {
    auto it = running.begin();
    std::advance(it, static_cast<long>(rng() % running.size()));
    state.Finish(it->first, now);
  }
  state.Submit(RandomJob(rng, next_id++, now), now);
}

double Ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

void Run(const std::string& policy_name, const Size& size, std::optional<int32_t> eta_replays) {
  std::mt19937 rng(42);
  int64_t next_id = 1;
  ClusterState state;
  Fill(state, size, rng, next_id);
  Policy policy = std::move(MakePolicy(policy_name)).value();
  if (eta_replays) policy.eta_replays = *eta_replays;
  // A server that has run a while has learned run times: without them the
  // predictor knows no distribution, and the ETA plan would run once where
  // it replays (Policy::eta_replays).
  if (policy.predictor) {
    std::mt19937 history(7);
    for (int i = 0; i < 5'000; ++i) {
      const JobSpec spec = RandomJob(history, 1'000'000'000 + i, Time::FromSeconds(0));
      const int64_t limit_us = spec.time_limit->micros();
      policy.predictor->Observe(spec, Duration::Micros(std::uniform_int_distribution<int64_t>(
                                          60'000'000, limit_us)(history)));
    }
  }
  Time now = Time::FromSeconds(3600);

  // Full passes first, on the initial state.
  std::vector<double> full;
  std::vector<double> plans;
  size_t etas = 0;
  for (int i = 0; i < size.full_passes; ++i) {
    DecideOptions options{ExplainLevel::kFull};
    options.defer_etas = true;  // as the server: the plan runs off its lock
    const auto start = std::chrono::steady_clock::now();
    const Decision decision = Decide(state, now, policy, options);
    const auto decided = std::chrono::steady_clock::now();
    const std::vector<PlannedEta> planned =
        decision.eta_plan ? PlanEtas(*decision.eta_plan) : std::vector<PlannedEta>{};
    full.push_back(Ms(decided - start));
    plans.push_back(Ms(std::chrono::steady_clock::now() - decided));
    etas = 0;
    for (const PlannedEta& eta : planned) etas += eta.eta.has_value();
  }

  // Incremental cycles: a running job ends, Decide, apply; a new job arrives.
  std::vector<double> cycles;
  for (int i = 0; i < size.incremental_cycles; ++i) {
    now = now + Duration::Seconds(1);
    NextEvent(state, rng, next_id, now);
    const auto start = std::chrono::steady_clock::now();
    const Decision decision = Decide(state, now, policy, DecideOptions{ExplainLevel::kReasons});
    cycles.push_back(Ms(std::chrono::steady_clock::now() - start));
    for (const Preemption& p : decision.preemptions) state.Preempt(p.job, now);
    for (const JobStart& s : decision.starts) state.Start(s, now);
  }

  // Event cycles between full ones.
  std::vector<double> events;
  std::optional<QueueOrder> order;
  for (int i = 0; i < size.incremental_cycles; ++i) {
    now = now + Duration::Seconds(1);
    NextEvent(state, rng, next_id, now);
    DecideOptions options{ExplainLevel::kReasons};
    const bool refresh = i % 10 == 0;
    if (refresh) {
      options.keep_order = true;
    } else {
      options.reuse = &*order;
    }
    const auto start = std::chrono::steady_clock::now();
    Decision decision = Decide(state, now, policy, options);
    if (!refresh) events.push_back(Ms(std::chrono::steady_clock::now() - start));
    if (decision.order) order = std::move(decision.order);
    for (const Preemption& p : decision.preemptions) state.Preempt(p.job, now);
    for (const JobStart& s : decision.starts) state.Start(s, now);
  }

  std::printf("%-8s %7d %9zu %9zu %10.3f %10.3f %10.3f %10.3f %10.1f %10.1f %8zu\n",
              policy_name.c_str(), size.nodes, state.pending().size(), state.running().size(),
              Quantile(cycles, 0.5), Quantile(cycles, 0.99), Quantile(events, 0.5),
              Quantile(events, 0.99), Quantile(full, 0.5), Quantile(plans, 0.5), etas);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::vector<std::string> policies;
  std::optional<int32_t> eta_replays;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--policy") == 0 && i + 1 < argc) {
      policies.emplace_back(argv[++i]);
    } else if (std::strcmp(argv[i], "--eta-replays") == 0 && i + 1 < argc &&
               std::atoi(argv[i + 1]) >= 1) {
      eta_replays = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: decide_bench [--quick] [--policy NAME]... [--eta-replays N]\n");
      return 2;
    }
  }
  if (policies.empty()) policies = {"fifo", "slurm", "las"};
  const std::vector<Size> sizes =
      quick ? std::vector<Size>{{50, 500, 20, 2}}
            : std::vector<Size>{{1000, 10'000, 300, 5}, {10'000, 100'000, 100, 3}};
  std::printf("%-8s %7s %9s %9s %10s %10s %10s %10s %10s %10s %8s\n", "policy", "nodes", "pending",
              "running", "incr_p50", "incr_p99", "event_p50", "event_p99", "full_p50", "plan_p50",
              "etas");
  std::printf("%-8s %7s %9s %9s %10s %10s %10s %10s %10s %10s %8s\n", "", "", "", "", "(ms)",
              "(ms)", "(ms)", "(ms)", "(ms)", "(ms)", "");
  for (const Size& size : sizes) {
    for (const std::string& policy : policies) Run(policy, size, eta_replays);
  }
  return 0;
}
