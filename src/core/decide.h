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
// Deterministic: same state, time, policy and options give the same
// Decision, whatever order the jobs were submitted in; every tie ends on the
// job id. No I/O.
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
  // Event cycles on a long queue. Ranking every pending job (a key each,
  // then a sort) and walking all of them is most of a cycle at 100k pending.
  // Slurm's answer, followed here: priorities are recomputed on a period
  // (PriorityCalcPeriod) and the scheduler woken by an event looks only at
  // the front of the queue (default_queue_depth), while a pass over the
  // whole queue runs on a timer. With `reuse` (the order of an earlier full
  // cycle, Decision::order), Decide ranks only the jobs that became pending
  // since, merges them into that order, and walks at most `depth`
  // candidates from the front. Keys of the others stay as of the full
  // cycle, jobs behind the depth wait for the next full cycle, and a cycle
  // that reuses explains only what it walked (Decision::partial). With no
  // more than `depth` jobs pending, `reuse` is ignored: ranking them all is
  // then cheap, and exact.
  const QueueOrder* reuse = nullptr;
  size_t depth = 1000;
  // Return this cycle's order in Decision::order (ignored when reusing).
  bool keep_order = false;
  // With kFull: leave the ETAs out of Decision::pending and return their
  // plan in Decision::eta_plan instead, for the owner to run elsewhere
  // (PlanEtas, eta_plan.h). Planning is most of a full pass; the server runs
  // it outside its lock.
  bool defer_etas = false;
};

// REQUIRES: policy.runtimes is set.
Decision Decide(const ClusterState& state, Time now, const Policy& policy,
                const DecideOptions& options = {});

}  // namespace berth::core
