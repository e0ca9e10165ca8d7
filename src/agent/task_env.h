// What a task runs with: its argv (the job's command, or its script through
// the script's shebang or /bin/sh), its working directory, its whole
// environment and its cgroup. Pure functions, so the rules are tested
// without processes.
//
// The environment, later entries winning:
//   1. a few variables passed through from the agent's own environment
//      (PATH, HOME, USER, LOGNAME, LANG, LC_*, TZ, TMPDIR, LD_LIBRARY_PATH);
//      nothing else, so the agent's secrets never reach a job; then HOME,
//      USER, LOGNAME and SHELL from the passwd entry of the task's account;
//   2. the job's `env`;
//   3. what Berth sets and a job cannot override (the server refuses BERTH_*
//      and CUDA_VISIBLE_DEVICES in `env`):
//        CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES  the task's GPU indices,
//                      "0,1,2,3"; a task without GPUs gets "" and "void"
//        MASTER_ADDR, MASTER_PORT                  the rendezvous (task 0's node)
//        WORLD_SIZE, RANK                          tasks in the job, this task's index
//        LOCAL_RANK, LOCAL_WORLD_SIZE              the same among this node's tasks
//        NODE_RANK, GROUP_RANK                     this node among the job's nodes
//        BERTH_JOB_ID, BERTH_TASK, BERTH_ATTEMPT, BERTH_USER, BERTH_JOB_NAME,
//        BERTH_NODE, BERTH_GPUS, BERTH_TASK_DIR (the task's scratch dir)
//        SLURM_JOB_ID, SLURM_JOB_NODELIST, ... for a Slurm job (slurm_env.h)
//        BERTH_RESTART_COUNT, SLURM_RESTART_COUNT  runs of the job before this
//                      one (attempt - 1): requeues, preemptions, retries
//        BERTH_CHECKPOINT_FILE   touch it after saving a checkpoint: the agent
//                      reports its age and a preemption then picks the
//                      victim that loses least (CheckpointFile)
#pragma once

#include <map>
#include <optional>
#include <string>

#include "agent/account.h"
#include "agent/cgroup_setup.h"
#include "agent/task_dir.h"
#include "protocol/desired_state.h"

namespace berth::agent {

struct TaskContext {
  std::string node;      // this agent's node name
  std::string task_dir;  // the task's directory in the state dir
  std::map<std::string, std::string> base_env;
  std::optional<Account> account = std::nullopt;  // who the task runs as
  // Where its cgroup goes; null: tasks run without cgroups.
  const TaskCgroupConfig* cgroups = nullptr;
};

// Layer 1 from an environ-style array.
std::map<std::string, std::string> PassThroughEnvironment(char** environ);

std::map<std::string, std::string> TaskEnvironment(const protocol::TaskAssignment& assignment,
                                                   const TaskContext& context);

// The supervisor's instructions for one task. A script job runs
// `<task_dir>/script` (the runner writes it): directly when it starts with
// "#!", else through /bin/sh. The working directory is the job's, or the
// task's scratch dir (`<task_dir>/work`) when the job named none. The spec
// names no account to switch to: the runner adds it (spec.run_as) when the
// account is not the agent's own. The job's --output and --error patterns
// are expanded for this task (%N is this node) and made absolute against
// the working directory.
TaskSpec BuildTaskSpec(const protocol::TaskAssignment& assignment, const TaskContext& context);

// The task's cgroup: under the node's parent, named by the task's key, with
// the job's per-task memory and CPU as limits, the node's pids limit, and
// every GPU device the task was not given denied.
TaskCgroup CgroupForTask(const TaskCgroupConfig& config, const TaskKey& key,
                         const protocol::ResourceLimits& limits, const std::vector<int32_t>& gpus);

// `<task_dir>/work`
std::string ScratchDir(const std::string& task_dir);

// `<task_dir>/work/.berth-checkpoint`: in the scratch dir, which is the
// task's user's (the task may create it), and dotted so that it does not
// clash with the job's own checkpoint files.
std::string CheckpointFile(const std::string& task_dir);

// "0,1,2,3"
std::string JoinIndices(const std::vector<int32_t>& indices);

}  // namespace berth::agent
