#include "cli/slurm/slurm_allocation.h"

#include <algorithm>
#include <numeric>

namespace berth::cli::slurm {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// `tasks` over `nodes`, as evenly as possible, the first nodes one more.
std::vector<int64_t> Spread(int64_t tasks, int64_t nodes) {
  std::vector<int64_t> layout(static_cast<size_t>(nodes), tasks / nodes);
  for (int64_t i = 0; i < tasks % nodes; ++i) ++layout[static_cast<size_t>(i)];
  return layout;
}

// `tasks` in nodes of `per_node` each, the last node with the rest.
std::vector<int64_t> Fill(int64_t tasks, int64_t per_node) {
  std::vector<int64_t> layout(static_cast<size_t>(tasks / per_node), per_node);
  if (tasks % per_node != 0) layout.push_back(tasks % per_node);
  return layout;
}

Status CheckCombinations(const SlurmResourceOptions& options) {
  const int gpu_forms = (options.gpus ? 1 : 0) + (options.gpus_per_node ? 1 : 0) +
                        (options.gres_gpus ? 1 : 0) + (options.gpus_per_task ? 1 : 0);
  if (gpu_forms > 1) {
    return InvalidArgument(
        "--gpus: give one of --gpus (per job), --gpus-per-node (or --gres=gpu:N) and "
        "--gpus-per-task");
  }
  if (options.cpus_per_task && options.cpus_per_gpu) {
    return InvalidArgument("--cpus-per-gpu: not with --cpus-per-task (Slurm refuses both)");
  }
  const int mem_forms = (options.mem_mib ? 1 : 0) + (options.mem_per_cpu_mib ? 1 : 0) +
                        (options.mem_per_gpu_mib ? 1 : 0);
  if (mem_forms > 1) {
    return InvalidArgument("--mem: --mem, --mem-per-cpu and --mem-per-gpu are mutually exclusive");
  }
  return Status::Ok();
}

// How many tasks of the job's per-task demand the reference node holds.
int64_t TasksPerReferenceNode(const SlurmResourceOptions& options, const NodeSize& node) {
  const int64_t cpus_per_task = options.cpus_per_task.value_or(1);
  int64_t fit = cpus_per_task > 0 ? node.cpus / cpus_per_task : node.cpus;
  if (options.gpus_per_task && *options.gpus_per_task > 0) {
    fit = std::min(fit, node.gpus / *options.gpus_per_task);
  }
  if (options.mem_per_cpu_mib && *options.mem_per_cpu_mib > 0 && node.memory_mib > 0) {
    fit = std::min(fit, node.memory_mib / (*options.mem_per_cpu_mib * cpus_per_task));
  }
  return fit;
}

// The Slurm tasks on each node.
Result<std::vector<int64_t>> Layout(const SlurmResourceOptions& options,
                                    const std::optional<NodeSize>& reference) {
  if (options.nodes) {
    int64_t nodes = *options.nodes;
    if (options.ntasks) {
      // Slurm: "can't run 1 processes on 2 nodes, setting nnodes to 1".
      nodes = std::min(nodes, *options.ntasks);
      if (options.ntasks_per_node && *options.ntasks > nodes * *options.ntasks_per_node) {
        return InvalidArgument("--ntasks: " + std::to_string(*options.ntasks) +
                               " tasks do not fit " + std::to_string(nodes) + " nodes of " +
                               std::to_string(*options.ntasks_per_node) + " (--ntasks-per-node)");
      }
      return Spread(*options.ntasks, nodes);
    }
    return std::vector<int64_t>(static_cast<size_t>(nodes), options.ntasks_per_node.value_or(1));
  }
  if (options.ntasks_per_node) {
    return Fill(options.ntasks.value_or(*options.ntasks_per_node), *options.ntasks_per_node);
  }
  const int64_t tasks = options.ntasks.value_or(1);
  int64_t nodes = 1;
  if (reference && !options.exclusive) {
    const int64_t per_node = TasksPerReferenceNode(options, *reference);
    if (per_node > 0 && tasks > per_node) nodes = CeilDiv(tasks, per_node);
    // GPUs per job beyond one node: the fewest nodes that hold them.
    if (options.gpus && reference->gpus > 0) {
      nodes = std::max(nodes, CeilDiv(*options.gpus, reference->gpus));
    }
  }
  // Every node runs at least one task (Slurm's NumTasks is then the nodes).
  if (tasks < nodes) return std::vector<int64_t>(static_cast<size_t>(nodes), 1);
  return Spread(tasks, nodes);
}

}  // namespace

int64_t SlurmAllocation::tasks() const {
  return std::accumulate(tasks_per_node.begin(), tasks_per_node.end(), int64_t{0});
}

bool SlurmAllocation::even() const {
  return std::all_of(shares.begin(), shares.end(),
                     [&](const NodeShare& share) { return share == shares.front(); });
}

Result<SlurmAllocation> AllocateSlurmJob(const SlurmResourceOptions& options,
                                         const std::optional<NodeSize>& reference_node) {
  BERTH_RETURN_IF_ERROR(CheckCombinations(options));
  SlurmAllocation allocation;
  BERTH_ASSIGN_OR_RETURN(allocation.tasks_per_node, Layout(options, reference_node));
  const int64_t nodes = allocation.nodes();
  if (options.gpus && *options.gpus > 0 && *options.gpus < nodes) {
    return InvalidArgument("--gpus: " + std::to_string(*options.gpus) +
                           " GPUs cannot spread over " + std::to_string(nodes) +
                           " nodes (every node gets one at least)");
  }
  if ((options.exclusive || options.mem_mib == 0) && !reference_node) {
    return InvalidArgument(std::string(options.exclusive ? "--exclusive" : "--mem=0") +
                           ": the size of the cluster's nodes is not known");
  }
  // --gpus per job: what the nodes after this one still need, one each.
  int64_t gpus_left = options.gpus.value_or(0);
  for (size_t node = 0; node < allocation.tasks_per_node.size(); ++node) {
    const int64_t tasks_here = allocation.tasks_per_node[node];
    NodeShare share;
    if (options.exclusive) {
      // The whole node's GPUs and CPUs; its memory as asked, or (asking
      // none) the queue's per-CPU default for them, as Slurm's.
      share.gpus = reference_node->gpus;
    } else if (options.gpus_per_node || options.gres_gpus) {
      share.gpus = options.gpus_per_node.value_or(options.gres_gpus.value_or(0));
    } else if (options.gpus_per_task) {
      share.gpus = *options.gpus_per_task * tasks_here;
    } else if (options.gpus.value_or(0) > 0) {
      const int64_t later_nodes = nodes - static_cast<int64_t>(node) - 1;
      share.gpus = gpus_left - later_nodes;
      if (reference_node && reference_node->gpus > 0) {
        share.gpus = std::min(share.gpus, reference_node->gpus);
      }
      gpus_left -= share.gpus;
    }
    share.cpus = options.exclusive      ? reference_node->cpus
                 : options.cpus_per_gpu ? std::max(tasks_here, *options.cpus_per_gpu * share.gpus)
                                        : tasks_here * options.cpus_per_task.value_or(1);
    if (options.mem_mib == 0) {
      // Slurm's --mem=0: all the memory of each node; each gets the
      // reference (largest) node's.
      share.memory_mib = reference_node->memory_mib;
    } else if (options.mem_mib) {
      share.memory_mib = *options.mem_mib;
    } else if (options.mem_per_cpu_mib) {
      share.memory_mib = *options.mem_per_cpu_mib * share.cpus;
    } else if (options.mem_per_gpu_mib) {
      share.memory_mib = *options.mem_per_gpu_mib * share.gpus;
    }
    allocation.shares.push_back(share);
  }
  if (gpus_left > 0) {
    return InvalidArgument("--gpus: " + std::to_string(*options.gpus) + " GPUs do not fit " +
                           std::to_string(nodes) + " nodes of " +
                           std::to_string(reference_node->gpus) + " GPUs");
  }
  return allocation;
}

}  // namespace berth::cli::slurm
