// The simulated cluster: one shared pool ("80x8xP100") or one partition per
// virtual cluster (a Helios-style "vc,node num" file), each a list of nodes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "core/node.h"
#include "core/quota.h"

namespace berth::sim {

struct Partition {
  std::string name;  // the queue (VC) it serves; empty for the shared pool
  std::vector<core::NodeSpec> nodes;
};

// "NODESxGPUSxTYPE", e.g. "80x8xP100": nodes named node0000.. with GPUs of
// that model in one interconnect group. Several groups, each with its node
// features in brackets, joined by '+': "40x8xA100[ib]+8x8xH100[ib,nvlink]"
// (node names run on across the groups), so that policies are evaluated
// on clusters whose jobs ask for models and features (--constraint).
Result<Partition> ParsePool(std::string_view shape);

struct VcSize {
  std::string name;
  int nodes = 0;
};

// A "vc,node num" CSV (HeliosArtifact's philly_vc.csv). `flag` names the
// option in error messages.
Result<std::vector<VcSize>> ReadVcSizes(const std::string& path, std::string_view flag);

// One partition per VC of that many nodes of `gpus_per_node` GPUs of
// `gpu_type`.
Result<std::vector<Partition>> ReadVcPartitions(const std::string& path, int gpus_per_node,
                                                const std::string& gpu_type);

// One team queue per VC on a shared pool of `cluster_gpus` GPUs, its
// guarantee proportional to the VC's node count, no ceiling (borrowing
// allowed). Jobs of other VCs go to the default queue.
Result<std::vector<core::QueueSpec>> ReadVcQuotas(const std::string& path, int64_t cluster_gpus);

}  // namespace berth::sim
