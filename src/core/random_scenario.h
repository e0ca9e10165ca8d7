// Seeded random clusters and workloads for determinism and invariant tests.
// Test-only.
#pragma once

#include <random>
#include <vector>

#include "core/cluster_state.h"
#include "core/job.h"
#include "core/node.h"
#include "core/test_builders.h"

namespace berth::core::testing {

struct RandomScenario {
  std::vector<NodeSpec> nodes;
  std::vector<JobSpec> jobs;  // ascending submit time
};

// With constraints: nodes get features and jobs ask for them, for model
// sets, and for nodes by name (a separate random stream, so the scenarios
// without them stay as they were).
enum class Constraints { kNone, kSome };

inline RandomScenario MakeRandomScenario(uint32_t seed, int node_count, int job_count,
                                         Constraints constraints = Constraints::kNone) {
  std::mt19937 rng(seed);
  std::mt19937 constraint_rng(seed * 7919 + 1);
  auto roll = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(constraint_rng);
  };
  const bool constrained = constraints == Constraints::kSome;
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  RandomScenario scenario;
  for (int i = 0; i < node_count; ++i) {
    const int gpus = pick(0, 3) == 0 ? 4 : 8;
    NodeSpec spec = MakeNodeSpec("n" + std::to_string(i), pick(0, 4) == 0 ? "A100" : "V100", gpus,
                                 Cores(64), MemoryMiB(256 * 1024));
    for (GpuDevice& gpu : spec.gpus) gpu.interconnect_group = gpu.index < gpus / 2 ? 0 : 1;
    if (constrained && roll(0, 1) == 0) spec.features.insert("ib");
    if (constrained && roll(0, 2) == 0) spec.features.insert("nvlink");
    scenario.nodes.push_back(spec);
  }
  int64_t t = 0;
  for (int i = 0; i < job_count; ++i) {
    t += pick(0, 30);
    JobBuilder job(i + 1);
    const int shape = pick(0, 9);
    if (shape < 5) {
      job.Gpus(1 << pick(0, 2));
    } else if (shape < 7) {
      job.Gpus(8).Tasks(pick(2, 3));
    } else if (shape < 8) {
      job.Gpus(2).Tasks(pick(2, 6));
    } else if (shape < 9) {
      job.GpuMilli(250 * pick(1, 3));
    } else {
      job.Gpus(1).Cpu(1000 * pick(1, 16)).Memory(1024 * pick(1, 64));
    }
    if (pick(0, 5) == 0) job.Type("A100");
    job.Submit(t).Limit(pick(10, 3000)).Queue("q" + std::to_string(pick(0, 2)));
    if (pick(0, 1) == 0) job.Preemptible();
    if (constrained) {
      const int kind = roll(0, 7);
      if (kind == 0) job.Constraint("ib");
      if (kind == 1) job.Constraint("ib|nvlink");
      if (kind == 2) job.Constraint("!nvlink");
      if (kind == 3) job.NodeList({"n0", "n1", "n2", "n3"});
      if (kind == 4) job.Exclude({"n0", "n1"});
      if (kind == 5) job.Types({"A100", "V100"});
      if (kind == 6) job.OneGroup();
    }
    scenario.jobs.push_back(job);
  }
  return scenario;
}

}  // namespace berth::core::testing
