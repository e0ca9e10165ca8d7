#include "agent/slurm_env.h"

#include <algorithm>
#include <charconv>
#include <numeric>
#include <vector>

#include "common/hostlist.h"

namespace berth::agent {
namespace {

// A job given no task count (sbatch exports SLURM_NTASKS only with -n or
// --ntasks-per-node, as Slurm's does) lists in SLURM_TASKS_PER_NODE what
// Slurm's batch environment lists for it: as many tasks as the job's CPUs
// hold at --cpus-per-task each (`-N 1 --exclusive` on 32 CPUs: "32"),
// each node the tasks its own CPUs hold and the first nodes any left over.
// Its srun steps still run one task per node (server/job_step.h).
std::vector<int> TasksTheCpusHold(const std::vector<int64_t>& cpus_by_node,
                                  const std::map<std::string, std::string>& job_env) {
  int64_t cpus_per_task = 1;
  if (const auto given = job_env.find("SLURM_CPUS_PER_TASK"); given != job_env.end()) {
    const std::string& text = given->second;
    int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error == std::errc() && end == text.data() + text.size() && value > 0) {
      cpus_per_task = value;
    }
  }
  if (cpus_by_node.empty()) return {};
  std::vector<int> layout;
  int64_t placed = 0;
  for (int64_t cpus : cpus_by_node) {
    layout.push_back(static_cast<int>(cpus / cpus_per_task));
    placed += cpus / cpus_per_task;
  }
  const int64_t all_cpus = std::accumulate(cpus_by_node.begin(), cpus_by_node.end(), int64_t{0});
  const int64_t tasks = std::max<int64_t>(all_cpus / cpus_per_task, 1);
  for (size_t node = 0; placed < tasks; node = (node + 1) % layout.size(), ++placed) {
    ++layout[node];
  }
  return layout;
}

}  // namespace

void AddSlurmEnvironment(const protocol::TaskAssignment& assignment, const std::string& node,
                         std::map<std::string, std::string>& env) {
  if (!assignment.launch.slurm) return;
  const protocol::SlurmAllocation& slurm = *assignment.launch.slurm;
  const std::string job_id = std::to_string(core::Value(assignment.job));
  env["SLURM_JOB_ID"] = env["SLURM_JOBID"] = job_id;
  env["SLURM_JOB_NAME"] = assignment.launch.name;
  env["SLURM_JOB_USER"] = assignment.user;
  env["SLURM_JOB_PARTITION"] = slurm.partition;
  env["SLURM_CLUSTER_NAME"] = slurm.cluster;
  env["SLURMD_NODENAME"] = node;

  const std::string nodelist = CompressHostlist(slurm.nodes);
  env["SLURM_JOB_NODELIST"] = env["SLURM_NODELIST"] = nodelist;
  const std::string nodes = std::to_string(slurm.nodes.size());
  env["SLURM_JOB_NUM_NODES"] = env["SLURM_NNODES"] = nodes;
  const std::vector<int> layout(slurm.tasks_per_node.begin(), slurm.tasks_per_node.end());

  // This task's share; every node's the same unless the server lists
  // them. A Slurm task has a CPU at least, as Slurm counts them.
  const size_t here = std::min(static_cast<size_t>(std::max(assignment.node_rank, 0)),
                               layout.empty() ? size_t{0} : layout.size() - 1);
  const int64_t tasks_here = layout.empty() ? 1 : layout[here];
  const int64_t cpus = std::max((assignment.launch.limits.cpu.value() + 999) / 1000, tasks_here);
  std::vector<int64_t> cpus_by_node(slurm.nodes.size(), cpus);
  if (slurm.cpus_per_node.size() == slurm.nodes.size()) {
    cpus_by_node.assign(slurm.cpus_per_node.begin(), slurm.cpus_per_node.end());
  }
  env["SLURM_CPUS_ON_NODE"] = std::to_string(cpus);
  env["SLURM_JOB_CPUS_PER_NODE"] =
      TasksPerNodeString(std::vector<int>(cpus_by_node.begin(), cpus_by_node.end()));
  env["SLURM_TASKS_PER_NODE"] =
      TasksPerNodeString(assignment.launch.env.contains("SLURM_NTASKS")
                             ? layout
                             : TasksTheCpusHold(cpus_by_node, assignment.launch.env));
  if (!assignment.gpus.empty()) {
    std::string indices;
    for (int32_t gpu : assignment.gpus)
      indices += (indices.empty() ? "" : ",") + std::to_string(gpu);
    env["SLURM_GPUS_ON_NODE"] = std::to_string(assignment.gpus.size());
    env["SLURM_JOB_GPUS"] = indices;
  }

  // The batch step on node 0; elsewhere the node's first Slurm task. A
  // node of several Berth tasks (srun outside a job) has one Slurm task in
  // each, in the order of their local ranks.
  const int first_rank =
      std::accumulate(layout.begin(), layout.begin() + static_cast<long>(here), 0);
  const int32_t local = std::max(assignment.local_rank, 0);
  env["SLURM_NODEID"] = std::to_string(here);
  env["SLURM_PROCID"] = std::to_string(first_rank + local);
  env["SLURM_LOCALID"] = std::to_string(local);
  // Runs before this one (requeues and retries): 0 on the first.
  env["SLURM_RESTART_COUNT"] = std::to_string(std::max(assignment.attempt - 1, 0));
}

}  // namespace berth::agent
