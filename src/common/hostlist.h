// Slurm's compact text forms for a job's nodes and its tasks per node, as
// Slurm writes them into SLURM_JOB_NODELIST and SLURM_TASKS_PER_NODE (and
// scontrol prints them): scripts and tools (srun, mpirun, PyTorch
// Lightning, submitit) parse these forms, so they must be Slurm's exactly.
#pragma once

#include <string>
#include <vector>

namespace berth {

// Slurm's hostlist form of `names`, in the order given: names that share a
// prefix and end in consecutive numbers become one range, and the ranges of
// adjacent names with the same prefix share one bracket:
//   {sim1, sim2, sim4, gpu-a}  ->  "sim[1-2,4],gpu-a"
//   {n01, n02, n03}            ->  "n[01-03]"      (zero padding kept)
//   {sim1}                     ->  "sim1"           (a lone name keeps no bracket)
// A number joins a range only if writing it with the range's width gives the
// name back (so {n9, n10} is "n[9-10]" but {n09, n010} stays apart): the
// expansion of the result is exactly `names`. Names are not sorted or made
// unique; the caller's order is the job's node order (node 0 first).
std::string CompressHostlist(const std::vector<std::string>& names);

// Slurm's form of the number of tasks on each node, runs of equal counts
// written COUNT(xREPEAT): {2, 2, 1} -> "2(x2),1"; {4} -> "4"; {} -> "".
std::string TasksPerNodeString(const std::vector<int>& tasks_per_node);

}  // namespace berth
