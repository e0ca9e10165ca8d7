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
//           node x --gpus-per-task; --gpus (per job) packed: one on every
//           node, the rest on the first nodes as far as the reference node
//           holds them (-N 2 --gpus=6 is 5 + 1, as Slurm's _set_job_bits1).
//   CPUs    per node: tasks on the node x --cpus-per-task (1 by default);
//           with --cpus-per-gpu, GPUs on the node x it.
//   memory  per node: --mem; CPUs x --mem-per-cpu; GPUs x --mem-per-gpu;
//           none asked: none (see below).
//   --exclusive: the whole reference node's GPUs and CPUs; memory as
//           asked, or asking none the queue's per-CPU default for the node's
//           CPUs (core/default_memory.h), as Slurm's DefMemPerCPU.
// Nodes whose shares differ (-N 2 -n 3, --gpus packed) become a gang whose
// tasks differ in shape (core::JobSpec::task_shapes).
//
// Where Berth differs (docs/from-slurm.md):
//   - --gpus per job is split when the job is submitted, as Slurm splits
//     it on empty nodes; Slurm splits it when it places the job, by what
//     each node has free then;
//   - a job asking no memory gets its queue's default memory
//     (core/default_memory.h), none in a queue without one (Slurm without
//     DefMemPerCPU/DefMemPerGPU gives it the whole node's);
//   - --mem=0 (the whole node) gives every node the largest node's memory;
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

// One node's share of the job (the Berth task on it).
struct NodeShare {
  int64_t gpus = 0;
  int64_t cpus = 0;
  int64_t memory_mib = 0;  // 0: none reserved

  bool operator==(const NodeShare&) const = default;
};

// What the job gets: `tasks_per_node.size()` nodes, each with its share.
struct SlurmAllocation {
  std::vector<int64_t> tasks_per_node;  // Slurm tasks on each node, node 0 first
  std::vector<NodeShare> shares;        // one per node, node 0 first

  int64_t nodes() const { return static_cast<int64_t>(tasks_per_node.size()); }
  int64_t tasks() const;
  // Whether every node has the same share.
  bool even() const;
};

// InvalidArgument naming the option for a combination Slurm refuses too
// (more nodes than tasks, --cpus-per-task with --cpus-per-gpu, both --mem
// forms, fewer --gpus than nodes) or Berth cannot give (--exclusive or
// --mem=0 with no known node size).
Result<SlurmAllocation> AllocateSlurmJob(const SlurmResourceOptions& options,
                                         const std::optional<NodeSize>& reference_node);

}  // namespace berth::cli::slurm
