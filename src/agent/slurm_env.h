// The SLURM_* variables a Slurm job's task sees (issue 29), as slurmd sets
// them for a batch script: from the job's allocation (the launch's
// `slurm`: its nodes and Slurm task layout) and this task's share. The
// variables sbatch itself exports from its options (SLURM_NTASKS,
// SLURM_CPUS_PER_TASK, SLURM_GPUS_PER_NODE, SLURM_SUBMIT_DIR...) come with
// the job's env (cli/submit_options.h). Pure.
//
// SLURM_TASKS_PER_NODE is the job's Slurm task layout, or for a job given
// no task count (no SLURM_NTASKS in its env) the tasks its CPUs hold, as
// Slurm's batch environment lists them.
//
// A Slurm job is one Berth task per node; task N is node N. Its process is
// the batch step on node 0 (SLURM_PROCID, SLURM_NODEID and SLURM_LOCALID
// all 0, as in Slurm) and on node N the first Slurm task of that node.
//
// Read by PyTorch Lightning's SLURMEnvironment (SLURM_NTASKS, SLURM_PROCID,
// SLURM_LOCALID, SLURM_NODEID, SLURM_NODELIST, SLURM_JOB_ID,
// SLURM_JOB_NAME, SLURM_NTASKS_PER_NODE) and submitit (SLURM_JOB_ID,
// SLURM_NTASKS, SLURM_JOB_NUM_NODES, SLURM_NODEID, SLURM_JOB_NODELIST,
// SLURM_PROCID, SLURM_LOCALID, SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID).
#pragma once

#include <map>
#include <string>

#include "protocol/desired_state.h"

namespace berth::agent {

// Adds the variables of `assignment`'s Slurm job to `env` (nothing when the
// launch has no `slurm`). `node` is this agent's node name.
void AddSlurmEnvironment(const protocol::TaskAssignment& assignment, const std::string& node,
                         std::map<std::string, std::string>& env);

}  // namespace berth::agent
