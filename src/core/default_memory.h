// The memory a job that asks none is given in its queue: Slurm's partition
// DefMemPerGPU and DefMemPerCPU, which GPU clusters set so that a job
// without --mem neither takes a whole node's memory (Slurm with neither
// set) nor reserves none (Berth without them) and is then killed or
// crowded out by its neighbours.
//
// Per task (a Slurm job's task is its node, so this is per node there):
//   - with GPUs and a per-GPU default: that much per GPU (a share of a GPU
//     gets its share of it);
//   - otherwise, with a per-CPU default: that much per CPU, counting the
//     task's CPUs up to whole ones and at least `least_cpus` (Slurm gives
//     every Slurm task a CPU: a Slurm job's node holds at least its tasks
//     there; a Berth task asking none still runs on one);
//   - otherwise none, as before.
// A queue that sets either key decides for its jobs and its descendants'
// (the nearest on the job's path wins, as a Slurm partition's defaults
// override the cluster's); the server applies it when it admits a job
// whose tasks ask no memory (server/queue_admission.h).
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "core/quota.h"
#include "core/resources.h"

namespace berth::core {

// The defaults of the nearest queue on `queue`'s path that sets any;
// nullptr when none does.
const DefaultMemory* QueueDefaultMemory(const QuotaTree& tree, size_t queue);

// What one task of `task`'s shape gets from `defaults` (0: nothing applies).
MemoryMiB DefaultTaskMemory(const DefaultMemory& defaults, const TaskShape& task,
                            int64_t least_cpus = 1);

// `least_cpus` for a Slurm job's task (one per node) from its Slurm tasks
// on each node: a CPU each, on the node holding the most; 1 for a job
// without Slurm's layout.
int64_t LeastCpusOfSlurmNode(std::span<const int32_t> slurm_tasks_per_node);

// The per-CPU default when it is the one `task` gets (no GPUs, or no
// per-GPU default): a Slurm job's batch environment then has it as
// SLURM_MEM_PER_CPU, as Slurm's does for its partition's DefMemPerCPU.
std::optional<MemoryMiB> PerCpuDefaultFor(const DefaultMemory& defaults, const TaskShape& task);

}  // namespace berth::core
