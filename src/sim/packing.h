// The packing experiment of the FGD paper (Weng et al., "Beware of
// Fragmentation", USENIX ATC'23): how much of a GPU cluster a placement rule
// can fill before fragmentation stops it.
//
//   nodes (file order) --> NodeTable + Capacity (empty)
//   tasks (file order) --> one-task requests; those that fit no empty node
//                          are counted by reason and left out
//   pass 1, 2, ...: each remaining task, in order, is placed with core::Place
//                   under the rule and allocated; a task that does not fit is
//                   skipped (and so is any later task asking for at least as
//                   much, since capacity only shrinks)
//   stop when a full pass places nothing (or at the pass limit)
//   report: GPUs left unallocated, as a share of all GPU capacity
//
// Nothing is ever released: no durations are simulated. Repeating the same
// list is this experiment's way of "adding the same workload until nothing
// more fits"; the paper samples tasks from the trace instead, which comes to
// the same shape distribution.
//
// Two rules: `best-fit` (Place's default) and `berth`, the fragmentation-
// aware rule of core/fragmentation.h whose target workload is the task
// list's own shape distribution (each distinct shape weighted by how often it
// occurs). Deterministic: the same input gives the same result.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "core/node.h"
#include "core/resources.h"
#include "sim/pai2023.h"

namespace berth::sim {

enum class PackRule { kBestFit, kBerth };
// "best-fit" or "berth".
std::string_view PackRuleName(PackRule rule);

struct PackTask {
  int64_t line = 0;  // in the task list's file, for messages
  core::TaskShape shape;
  std::string gpu_type;  // the model it needs; empty: any
};

struct PackInput {
  std::vector<core::NodeSpec> nodes;  // in file order; names unique
  std::vector<PackTask> tasks;        // in file order
};

// The pods and nodes of the PAI 2023 lists as packing input (ToTaskShape,
// ToNodeSpec; gpu_spec as the task's model).
PackInput MakePackInput(const std::vector<Pai2023Node>& nodes, const std::vector<Pai2023Pod>& pods);

struct PackOptions {
  PackRule rule = PackRule::kBestFit;
  int64_t max_passes = 1000;  // a guard; real lists stop after a few passes
};

enum class PackStop {
  kPassPlacedNothing,  // the cluster is as full as the rule can make it
  kPassLimit,          // max_passes ran and the last one still placed tasks
};
// "a pass placed nothing" or "pass limit".
std::string_view PackStopName(PackStop stop);

struct PackResult {
  PackRule rule = PackRule::kBestFit;
  int64_t nodes = 0;
  int64_t total_gpus = 0;
  int64_t allocated_gpu_milli = 0;
  // 1 - allocated_gpu_milli / (total_gpus x 1000); 0 when there are no GPUs.
  double unallocated_gpu_share = 0;
  int64_t allocated_cpu_milli = 0;
  int64_t total_cpu_milli = 0;
  int64_t pods_placed = 0;  // over all passes
  // Passes over the list, the last one included (which placed nothing when
  // stop is kPassPlacedNothing).
  int64_t passes = 0;
  std::vector<int64_t> placed_per_pass;
  // Tasks that fit no node even on the empty cluster, by reason; they are in
  // no pass. Counted once (not per pass).
  std::map<std::string, int64_t> never_fit;
  // The FGD measure of the final state against the list's workload: the
  // expected GPUs a random task of the list could not use, over all nodes.
  double expected_fragmented_gpus = 0;
  PackStop stop = PackStop::kPassPlacedNothing;
};

// Packs the tasks onto the nodes under one rule. Fails with InvalidArgument
// when two nodes share a name.
Result<PackResult> Pack(const PackInput& input, const PackOptions& options);

}  // namespace berth::sim
