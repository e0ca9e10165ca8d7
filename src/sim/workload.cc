#include "sim/workload.h"

#include <algorithm>
#include <memory>

#include "core/node_table.h"
#include "core/placer.h"

namespace berth::sim {
namespace {

core::JobSpec ToSpec(const TraceJob& job, int64_t id, int max_node_gpus, PreemptibleRule rule) {
  core::JobSpec spec;
  spec.id = static_cast<core::JobId>(id);
  spec.user = job.user;
  spec.queue = job.queue;
  spec.priority = job.priority;
  spec.time_limit = job.time_limit;
  spec.estimate = job.estimate;
  spec.name = job.name;
  spec.preemptible =
      rule == PreemptibleRule::kAll || (rule == PreemptibleRule::kAsTraced && job.preemptible);
  spec.submit_time = job.submit;
  spec.gpu_types = job.gpu_types;
  if (!job.constraint.empty()) {
    spec.constraints = std::make_shared<const core::NodeConstraints>(
        core::NodeConstraints{job.constraint, {}, {}});
  }
  if (job.tasks > 0) {
    spec.tasks = job.tasks;
    spec.task.gpu = core::WholeGpus(job.gpus / job.tasks);
  } else if (max_node_gpus > 0 && job.gpus > max_node_gpus) {
    // Whole nodes: ceil(gpus / node size) tasks of a full node each.
    spec.tasks = (job.gpus + max_node_gpus - 1) / max_node_gpus;
    spec.task.gpu = core::WholeGpus(max_node_gpus);
  } else {
    spec.tasks = 1;
    spec.task.gpu = core::WholeGpus(job.gpus);
  }
  return spec;
}

}  // namespace

WorkloadSet BuildWorkloads(const std::vector<TraceJob>& trace, std::vector<Partition> partitions,
                           PreemptibleRule preemptible) {
  WorkloadSet set;
  std::map<std::string, size_t> by_name;
  std::vector<core::NodeTable> tables(partitions.size());
  for (size_t p = 0; p < partitions.size(); ++p) {
    by_name.emplace(partitions[p].name, p);
    for (const core::NodeSpec& node : partitions[p].nodes) tables[p].Add(node);
    set.workloads.push_back(Workload{std::move(partitions[p]), {}});
  }
  const bool pooled = set.workloads.size() == 1 && set.workloads[0].partition.name.empty();
  // Each distinct constraint is matched against a partition's nodes once.
  std::vector<std::unique_ptr<core::RequestResolver>> resolvers;
  for (const core::NodeTable& table : tables) {
    resolvers.push_back(std::make_unique<core::RequestResolver>(table));
  }

  for (size_t i = 0; i < trace.size(); ++i) {
    const TraceJob& job = trace[i];
    size_t p = 0;
    if (!pooled) {
      auto it = by_name.find(job.queue);
      if (it == by_name.end()) {
        ++set.skipped["queue not in --vc-nodes"];
        continue;
      }
      p = it->second;
    }
    const core::JobSpec spec =
        ToSpec(job, static_cast<int64_t>(i) + 1, tables[p].max_gpus_any(), preemptible);
    if (!core::FitsEmptyCluster(tables[p], resolvers[p]->Resolve(spec))) {
      // Would it fit without its model and constraints?
      core::JobSpec unconstrained = spec;
      unconstrained.gpu_types.clear();
      unconstrained.constraints = nullptr;
      const bool fits_otherwise =
          core::FitsEmptyCluster(tables[p], resolvers[p]->Resolve(unconstrained));
      ++set.skipped[fits_otherwise ? "no node of its cluster matches its gpu_type and constraint"
                                   : "needs more GPUs than its cluster has"];
      continue;
    }
    set.workloads[p].jobs.push_back(SimJob{spec, job.duration, job.line});
  }
  for (Workload& workload : set.workloads) {
    std::stable_sort(
        workload.jobs.begin(), workload.jobs.end(),
        [](const SimJob& a, const SimJob& b) { return a.spec.submit_time < b.spec.submit_time; });
  }
  return set;
}

}  // namespace berth::sim
