#include "agent/task_env.h"

#include <algorithm>
#include <cstring>

#include "agent/slurm_env.h"
#include "protocol/output_pattern.h"
#include "protocol/signal_name.h"

namespace berth::agent {

std::string ScratchDir(const std::string& task_dir) { return task_dir + "/" + task_files::kWork; }

std::string CheckpointFile(const std::string& task_dir) {
  return ScratchDir(task_dir) + "/.berth-checkpoint";
}

std::string JoinIndices(const std::vector<int32_t>& indices) {
  std::string out;
  for (int32_t index : indices) out += (out.empty() ? "" : ",") + std::to_string(index);
  return out;
}

std::map<std::string, std::string> PassThroughEnvironment(char** environ) {
  static const char* const kNames[] = {"PATH", "HOME", "USER",   "LOGNAME",
                                       "LANG", "TZ",   "TMPDIR", "LD_LIBRARY_PATH"};
  std::map<std::string, std::string> out;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const char* equals = std::strchr(*entry, '=');
    if (equals == nullptr) continue;
    const std::string name(*entry, static_cast<size_t>(equals - *entry));
    bool pass = name.rfind("LC_", 0) == 0;
    for (const char* known : kNames) pass |= name == known;
    if (pass) out[name] = equals + 1;
  }
  if (!out.contains("PATH")) out["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  return out;
}

std::map<std::string, std::string> TaskEnvironment(const protocol::TaskAssignment& assignment,
                                                   const TaskContext& context) {
  std::map<std::string, std::string> env = context.base_env;
  if (context.account) {
    env["HOME"] = context.account->home;
    env["USER"] = context.account->name;
    env["LOGNAME"] = context.account->name;
    env["SHELL"] = context.account->shell;
  }
  for (const auto& [name, value] : assignment.launch.env) env[name] = value;
  const std::string gpus = JoinIndices(assignment.gpus);
  env["CUDA_VISIBLE_DEVICES"] = gpus;
  // The NVIDIA container runtime reads "void" as "no GPU", and "" as "not set".
  env["NVIDIA_VISIBLE_DEVICES"] = gpus.empty() ? "void" : gpus;
  env["MASTER_ADDR"] = assignment.master_addr;
  env["MASTER_PORT"] = std::to_string(assignment.master_port);
  env["WORLD_SIZE"] = std::to_string(assignment.world_size);
  env["RANK"] = std::to_string(assignment.task);
  env["LOCAL_RANK"] = std::to_string(assignment.local_rank);
  env["LOCAL_WORLD_SIZE"] = std::to_string(assignment.local_world_size);
  env["NODE_RANK"] = std::to_string(assignment.node_rank);
  env["GROUP_RANK"] = std::to_string(assignment.node_rank);  // torchrun's name for it
  env["BERTH_JOB_ID"] = std::to_string(core::Value(assignment.job));
  env["BERTH_TASK"] = std::to_string(assignment.task);
  env["BERTH_ATTEMPT"] = std::to_string(assignment.attempt);
  // Runs before this one (requeues, preemptions, retries, lost nodes), as
  // Slurm counts them: the first run sees 0. A Slurm job also reads it as
  // SLURM_RESTART_COUNT (slurm_env.h).
  env["BERTH_RESTART_COUNT"] = std::to_string(std::max(assignment.attempt - 1, 0));
  env["BERTH_USER"] = assignment.user;
  env["BERTH_JOB_NAME"] = assignment.launch.name;
  // An array job's index, in Berth's names and Slurm's (scripts that pick
  // their configuration by $SLURM_ARRAY_TASK_ID).
  if (assignment.launch.array_index) {
    const std::string index = std::to_string(*assignment.launch.array_index);
    const std::string array_job =
        std::to_string(assignment.launch.array_job.value_or(core::Value(assignment.job)));
    env["BERTH_ARRAY_INDEX"] = env["SLURM_ARRAY_TASK_ID"] = index;
    env["BERTH_ARRAY_JOB_ID"] = env["SLURM_ARRAY_JOB_ID"] = array_job;
  }
  AddSlurmEnvironment(assignment, context.node, env);
  env["BERTH_NODE"] = context.node;
  env["BERTH_GPUS"] = gpus;
  env["BERTH_TASK_DIR"] = ScratchDir(context.task_dir);
  env["BERTH_CHECKPOINT_FILE"] = CheckpointFile(context.task_dir);
  return env;
}

TaskCgroup CgroupForTask(const TaskCgroupConfig& config, const TaskKey& key,
                         const protocol::ResourceLimits& limits, const std::vector<int32_t>& gpus) {
  TaskCgroup cgroup;
  cgroup.version = config.parent.version;
  for (const auto& [controller, dir] : config.parent.dirs) {
    cgroup.dirs[controller] = dir + "/" + key.DirName();
  }
  cgroup.memory_mib = limits.memory.value();
  cgroup.cpu_milli = limits.cpu.value();
  cgroup.pids_max = config.pids_max;
  for (const auto& [index, device] : config.gpu_devices) {
    if (std::find(gpus.begin(), gpus.end(), index) == gpus.end()) {
      cgroup.denied_devices.push_back(device);
    }
  }
  return cgroup;
}

TaskSpec BuildTaskSpec(const protocol::TaskAssignment& assignment, const TaskContext& context) {
  TaskSpec spec;
  spec.key = TaskKey{assignment.job, assignment.task, assignment.attempt};
  if (!assignment.launch.script.empty()) {
    const std::string script = context.task_dir + "/" + task_files::kScript;
    if (assignment.launch.script.rfind("#!", 0) == 0) {
      spec.argv = {script};
    } else {
      spec.argv = {"/bin/sh", script};
    }
  } else {
    spec.argv = assignment.launch.command;
  }
  for (const auto& [name, value] : TaskEnvironment(assignment, context)) {
    spec.env.push_back(name + "=" + value);
  }
  spec.workdir =
      assignment.launch.workdir.empty() ? ScratchDir(context.task_dir) : assignment.launch.workdir;
  const protocol::OutputNames names{core::Value(assignment.job),
                                    assignment.launch.name,
                                    assignment.user,
                                    assignment.launch.array_job,
                                    assignment.launch.array_index,
                                    context.node,
                                    assignment.task};
  const auto resolve = [&](const std::string& pattern) -> std::string {
    if (pattern.empty()) return "";
    std::string path = protocol::ExpandOutputPattern(pattern, names);
    return path.starts_with('/') ? path : spec.workdir + "/" + path;
  };
  spec.output_path = resolve(assignment.launch.output);
  spec.error_path = resolve(assignment.launch.error);
  spec.append_output = assignment.launch.append_output;
  spec.time_limit = assignment.launch.time_limit;
  spec.grace = assignment.launch.grace;
  if (const auto& early = assignment.launch.signal; early && spec.time_limit) {
    if (std::optional<int> number = protocol::SignalNumber(early->name)) {
      spec.early_signal = EarlySignalSpec{*number, early->before, early->batch_only};
    }
  }
  spec.gpus = assignment.gpus;
  if (context.cgroups != nullptr) {
    spec.cgroup =
        CgroupForTask(*context.cgroups, spec.key, assignment.launch.limits, assignment.gpus);
  }
  return spec;
}

}  // namespace berth::agent
