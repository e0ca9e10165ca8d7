// What a Slurm job's resource options allocate, read as Slurm 22.05
// (select/cons_tres) reads them, in Berth's model of a Slurm job: a gang of
// Berth tasks, one per node, each task that node's share (its GPUs, CPUs
// and memory), on distinct nodes, plus the Slurm task layout (Slurm tasks
// on each node) that the job's variables and srun steps follow. Pure.
//
// The rules (checked against a real Slurm in tests/data/slurm/golden/):
//   nodes   --nodes; else ceil(--ntasks / --ntasks-per-node); else one node
//           when the tasks fit the reference node (or none is known), else
//           the fewest nodes that hold them.
//   tasks   --ntasks; else nodes x --ntasks-per-node; else one per node.
//           Spread as evenly as possible, the first nodes taking one more.
//   GPUs    per node: --gpus-per-node or --gres=gpu[:TYPE]:N; tasks on the
//           node x --gpus-per-task; --gpus (per job) / nodes.
//   CPUs    per node: tasks on the node x --cpus-per-task (1 by default);
//           with --cpus-per-gpu, GPUs on the node x it.
//   memory  per node: --mem; CPUs x --mem-per-cpu; GPUs x --mem-per-gpu;
//           none asked: none (see below).
//   --exclusive: the whole reference node (its GPUs, CPUs and memory).
//
// Where Berth differs (docs/from-slurm.md), because every node of a Berth
// gang gets the same share:
//   - a node with fewer Slurm tasks than another (-N 2 -n 3) still gets
//     the largest node's share;
//   - --gpus per job is split evenly (Slurm packs -N 2 --gpus=6 as 5 + 1,
//     Berth as 3 + 3); a count that does not divide is refused;
//   - a job asking no memory gets its queue's default memory
//     (core/default_memory.h), none in a queue without one (Slurm without
//     DefMemPerCPU/DefMemPerGPU gives it the whole node's);
//   - --mem=0 (the whole node) and --exclusive give every node the
//     largest node's memory;
//   - the submission reserves CPUs only when they were asked for
//     (--cpus-per-task, --cpus-per-gpu, --mem-per-cpu, --exclusive); the
//     allocation and the job's variables still count Slurm's CPU per task.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace berth::cli::slurm {

// The Slurm resource options of one job (#SBATCH lines or sbatch's command
// line); unset: not given.
struct SlurmResourceOptions {
  std::optional<int64_t> nodes;            // --nodes/-N (the minimum of a range)
  std::optional<int64_t> ntasks;           // --ntasks/-n
  std::optional<int64_t> ntasks_per_node;  // --ntasks-per-node
  std::optional<int64_t> gpus;             // --gpus/-G, per job
  std::optional<int64_t> gpus_per_node;    // --gpus-per-node
  std::optional<int64_t> gres_gpus;        // --gres=gpu:N, per node too
  std::optional<int64_t> gpus_per_task;    // --gpus-per-task
  std::optional<int64_t> cpus_per_task;    // --cpus-per-task/-c
  std::optional<int64_t> cpus_per_gpu;     // --cpus-per-gpu
  std::optional<int64_t> mem_mib;          // --mem, per node; 0: the whole node
  std::optional<int64_t> mem_per_cpu_mib;  // --mem-per-cpu
  std::optional<int64_t> mem_per_gpu_mib;  // --mem-per-gpu
  bool exclusive = false;                  // --exclusive

  bool operator==(const SlurmResourceOptions&) const = default;
};

// A node's size: the reference for packing tasks without --nodes and for
// --exclusive (the largest node of the cluster, when the caller knows it).
struct NodeSize {
  int64_t gpus = 0;
  int64_t cpus = 0;
  int64_t memory_mib = 0;
};

// What the job gets: `tasks_per_node.size()` nodes, each with the same
// share (the gang's Berth task shape).
struct SlurmAllocation {
  std::vector<int64_t> tasks_per_node;  // Slurm tasks on each node, node 0 first
  int64_t gpus_per_node = 0;
  int64_t cpus_per_node = 0;
  int64_t memory_mib_per_node = 0;  // 0: none reserved

  int64_t nodes() const { return static_cast<int64_t>(tasks_per_node.size()); }
  int64_t tasks() const;
};

// InvalidArgument naming the option for a combination Slurm refuses too
// (more nodes than tasks, --cpus-per-task with --cpus-per-gpu, both --mem
// forms) or Berth cannot give (--gpus not divisible among the nodes,
// --exclusive or --mem=0 with no known node size).
Result<SlurmAllocation> AllocateSlurmJob(const SlurmResourceOptions& options,
                                         const std::optional<NodeSize>& reference_node);

}  // namespace berth::cli::slurm
