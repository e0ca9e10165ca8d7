// Decide: the one entry point of the scheduling core.
//
//   ClusterState (snapshot) + now + Policy  -->  Decision
//
// Pipeline (each step in its own file):
//   1. eligibility   pending jobs; ones that can never fit are set aside (decide.cc)
//   2. ordering      the policy's Orderer ranks the rest          (orderer.h)
//   3. discipline    strict / EASY backfill / preemptive walks the order,
//                    placing on a tentative copy of Capacity      (decide.cc,
//                    backfill.cc, preemption.cc; placement in placer.h)
//   4. explain       a reason per pending job; with kFull an ETA from a
//                    forward plan over expected job ends          (eta.h)
//
// Deterministic: same state, time and policy give the same Decision, whatever
// order the jobs were submitted in; every tie ends on the job id. No I/O.
#pragma once

#include "core/cluster_state.h"
#include "core/decision.h"
#include "core/policy.h"
#include "core/time.h"

namespace berth::core {

enum class ExplainLevel {
  kNone,     // starts, preemptions, reservations only: the simulator's hot path
  kReasons,  // plus a reason, position and blocker for every pending job
  kFull,     // plus an ETA for every pending job
};

struct DecideOptions {
  ExplainLevel explain = ExplainLevel::kReasons;
};

// REQUIRES: policy.runtimes is set.
Decision Decide(const ClusterState& state, Time now, const Policy& policy,
                const DecideOptions& options = {});

}  // namespace berth::core
