// From trace rows to the jobs a simulated partition runs.
//
// Each trace job becomes a core JobSpec with id = its position in the trace
// (1-based, after the --from/--to filter), so runs over several partitions
// merge without clashes. A job with more GPUs than the largest node becomes
// a gang that holds whole nodes: ceil(gpus / node size) tasks of a full node
// each (12 GPUs on 8-GPU nodes hold two nodes), as multi-node training jobs
// run (Slurm's --exclusive) and as the reference replay's consolidated rule
// places them. A trace job that names its tasks keeps them. Jobs that can never fit their partition
// are set aside and counted, never silently dropped.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/job.h"
#include "core/time.h"
#include "sim/cluster_spec.h"
#include "sim/trace.h"

namespace berth::sim {

struct SimJob {
  core::JobSpec spec;
  core::Duration duration;  // the truth, known only to the simulator and oracles
  int64_t trace_line = 0;
};

struct Workload {
  Partition partition;
  std::vector<SimJob> jobs;  // ascending submit time, then trace order
};

struct WorkloadSet {
  std::vector<Workload> workloads;         // one per partition, in partition order
  std::map<std::string, int64_t> skipped;  // set-aside jobs by reason
};

// Which trace jobs may be preempted by policies that honour the flag.
enum class PreemptibleRule {
  kAll,  // every job checkpoints (the traces do not say; Tiresias and
         // Helios assume it too)
  kNone,
  kAsTraced,  // the trace's own column (generic CSV `preemptible`)
};

// With a single partition named "" every job goes to it; otherwise a job
// goes to the partition named like its queue.
WorkloadSet BuildWorkloads(const std::vector<TraceJob>& trace, std::vector<Partition> partitions,
                           PreemptibleRule preemptible = PreemptibleRule::kAll);

}  // namespace berth::sim
