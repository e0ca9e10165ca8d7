#include "server/job_step.h"

#include <algorithm>

#include "common/hostlist.h"
#include "common/json_fields.h"
#include "common/time_format.h"

namespace berth::server {

using nlohmann::json;

namespace {

constexpr int64_t kMaxStepTasks = 4096;
constexpr size_t kMaxArgs = 4096;

// Tasks of the step on each of its nodes, in node order.
std::vector<int> TasksPerNode(const JobStep& step) {
  std::vector<int> counts(step.nodes.size(), 0);
  for (const StepTask& task : step.tasks) ++counts[static_cast<size_t>(task.node_index)];
  return counts;
}

}  // namespace

JobStep StepAsSeen(const store::JobRecord& job, JobStep step) {
  const bool run_over = core::IsTerminal(job.state) || job.attempts != step.attempt ||
                        job.state == core::JobState::kCompleting;
  if (!run_over) return step;
  for (StepTask& task : step.tasks) {
    if (!task.ended()) task.signal = 9;
  }
  if (!step.end_time) step.end_time = job.end_time;
  return step;
}

std::string StepStateName(const JobStep& step) {
  bool failed = false;
  for (const StepTask& task : step.tasks) {
    if (!task.ended()) return "running";
    failed |= task.signal.has_value() || task.exit_code.value_or(0) != 0;
  }
  if (step.cancelled) return "cancelled";
  return failed ? "failed" : "completed";
}

std::optional<int32_t> StepExitCode(const JobStep& step) {
  int32_t highest = 0;
  for (const StepTask& task : step.tasks) {
    if (!task.ended()) return std::nullopt;
    highest = std::max(highest, task.signal ? 128 + *task.signal : *task.exit_code);
  }
  return highest;
}

Result<StepRequest> ParseStepRequest(const json& body) {
  JsonFields fields(body, "");
  BERTH_RETURN_IF_ERROR(fields.CheckObject());
  StepRequest request;
  BERTH_ASSIGN_OR_RETURN(request.command, fields.Strings("command"));
  BERTH_ASSIGN_OR_RETURN(request.env, fields.StringMap("env"));
  BERTH_ASSIGN_OR_RETURN(int64_t ntasks, fields.Int("ntasks", 0, 1, kMaxStepTasks));
  BERTH_ASSIGN_OR_RETURN(int64_t nodes, fields.Int("nodes", 0, 1, kMaxStepTasks));
  BERTH_ASSIGN_OR_RETURN(int64_t per_node, fields.Int("ntasks_per_node", 0, 1, kMaxStepTasks));
  BERTH_RETURN_IF_ERROR(fields.Finish());
  if (request.command.empty() || request.command.front().empty()) {
    return InvalidArgument("command: a program to run is required");
  }
  if (request.command.size() > kMaxArgs) {
    return InvalidArgument("command: at most " + std::to_string(kMaxArgs) + " arguments");
  }
  if (ntasks > 0) request.ntasks = static_cast<int32_t>(ntasks);
  if (nodes > 0) request.nodes = static_cast<int32_t>(nodes);
  if (per_node > 0) request.ntasks_per_node = static_cast<int32_t>(per_node);
  return request;
}

Result<std::vector<StepTask>> LayOutStep(const std::vector<StepHost>& hosts,
                                         const StepRequest& request) {
  const auto available = static_cast<int32_t>(hosts.size());
  if (request.nodes && *request.nodes > available) {
    return InvalidArgument("nodes: the job has " + std::to_string(available) + " node" +
                           (available == 1 ? "" : "s") + ", not " + std::to_string(*request.nodes));
  }
  int32_t nodes = request.nodes.value_or(available);
  int32_t ntasks = 0;
  if (request.ntasks_per_node) {
    ntasks = request.ntasks.value_or(nodes * *request.ntasks_per_node);
    if (ntasks > nodes * *request.ntasks_per_node) {
      return InvalidArgument("ntasks: " + std::to_string(ntasks) + " tasks do not fit " +
                             std::to_string(nodes) + " nodes at " +
                             std::to_string(*request.ntasks_per_node) + " per node");
    }
  } else {
    ntasks = request.ntasks.value_or(nodes);
  }
  // Fewer tasks than nodes: Slurm uses only as many nodes.
  if (!request.nodes) nodes = std::min(nodes, ntasks);
  if (ntasks < nodes) {
    return InvalidArgument("ntasks: " + std::to_string(ntasks) + " tasks cannot use " +
                           std::to_string(nodes) + " nodes (at least one task per node)");
  }
  std::vector<int32_t> counts(static_cast<size_t>(nodes), 0);
  if (request.ntasks_per_node) {
    int32_t left = ntasks;
    for (int32_t& count : counts) {
      count = std::min(left, *request.ntasks_per_node);
      left -= count;
    }
  } else {
    for (int32_t node = 0; node < nodes; ++node) {
      counts[static_cast<size_t>(node)] = ntasks / nodes + (node < ntasks % nodes ? 1 : 0);
    }
  }
  std::vector<StepTask> tasks;
  for (int32_t node = 0; node < nodes; ++node) {
    for (int32_t local = 0; local < counts[static_cast<size_t>(node)]; ++local) {
      StepTask task;
      task.rank = static_cast<int32_t>(tasks.size());
      task.job_task = hosts[static_cast<size_t>(node)].job_task;
      task.node = hosts[static_cast<size_t>(node)].node;
      task.node_index = node;
      task.local_id = local;
      tasks.push_back(task);
    }
  }
  return tasks;
}

std::map<std::string, std::string> StepTaskEnvironment(core::JobId job, const JobStep& step,
                                                       const StepTask& task) {
  const std::vector<int> per_node = TasksPerNode(step);
  const std::string ntasks = std::to_string(step.tasks.size());
  const std::string nnodes = std::to_string(step.nodes.size());
  const std::string nodelist = CompressHostlist(step.nodes);
  const std::string tasks_per_node = TasksPerNodeString(per_node);
  std::map<std::string, std::string> env = step.env;
  env["SLURM_JOB_ID"] = env["SLURM_JOBID"] = std::to_string(core::Value(job));
  env["SLURM_STEP_ID"] = env["SLURM_STEPID"] = std::to_string(step.id);
  env["SLURM_PROCID"] = std::to_string(task.rank);
  env["SLURM_LOCALID"] = std::to_string(task.local_id);
  env["SLURM_NODEID"] = std::to_string(task.node_index);
  env["SLURMD_NODENAME"] = task.node;
  env["SLURM_STEP_NUM_TASKS"] = env["SLURM_NTASKS"] = env["SLURM_NPROCS"] = ntasks;
  env["SLURM_STEP_NUM_NODES"] = env["SLURM_NNODES"] = nnodes;
  env["SLURM_STEP_NODELIST"] = env["SLURM_NODELIST"] = nodelist;
  env["SLURM_STEP_TASKS_PER_NODE"] = env["SLURM_TASKS_PER_NODE"] = tasks_per_node;
  // torch.distributed's names for the same, for scripts that read them.
  env["RANK"] = std::to_string(task.rank);
  env["WORLD_SIZE"] = ntasks;
  env["LOCAL_RANK"] = std::to_string(task.local_id);
  env["LOCAL_WORLD_SIZE"] = std::to_string(per_node[static_cast<size_t>(task.node_index)]);
  env["NODE_RANK"] = env["GROUP_RANK"] = std::to_string(task.node_index);
  return env;
}

protocol::StepLaunch StepLaunchFor(core::JobId job, const JobStep& step, const StepTask& task) {
  return protocol::StepLaunch{step.id, task.rank, step.command,
                              StepTaskEnvironment(job, step, task), step.cancelled};
}

json StepJson(core::JobId job, const JobStep& step) {
  json tasks = json::array();
  for (const StepTask& task : step.tasks) {
    tasks.push_back({{"rank", task.rank},
                     {"node", task.node},
                     {"task", task.job_task},
                     {"exit_code", task.exit_code ? json(*task.exit_code) : json(nullptr)},
                     {"signal", task.signal ? json(*task.signal) : json(nullptr)}});
  }
  const std::optional<int32_t> exit_code = StepExitCode(step);
  return json{
      {"job", core::Value(job)},
      {"step", step.id},
      {"state", StepStateName(step)},
      {"exit_code", exit_code ? json(*exit_code) : json(nullptr)},
      {"command", step.command},
      {"nodes", step.nodes},
      {"nodelist", CompressHostlist(step.nodes)},
      {"start_time", step.start_time ? json(FormatRfc3339(*step.start_time)) : json(nullptr)},
      {"end_time", step.end_time ? json(FormatRfc3339(*step.end_time)) : json(nullptr)},
      {"tasks", tasks}};
}

}  // namespace berth::server
