// srun: inside a job (a batch script, a salloc shell: SLURM_JOB_ID or
// BERTH_JOB_ID set) runs its command as a step of that job, one process per
// step task on the job's nodes (job_step.h on the server); outside one it
// submits a job whose tasks all run the command, as srun does from a login
// node. Either way it prints the tasks' output as it comes, forwards
// SIGINT/SIGTERM (the step or the job is cancelled), and exits with the
// highest exit code of the tasks (docs/from-slurm.md).
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cli/slurm/exported_env.h"
#include "cli/slurm/output_follower.h"
#include "cli/slurm/sbatch_args.h"
#include "cli/slurm/slurm_client.h"
#include "cli/slurm/slurm_commands.h"

namespace berth::cli::slurm {
namespace {

using nlohmann::json;

constexpr char kUsage[] =
    "Usage: srun [OPTIONS] COMMAND [ARGS...]\n"
    "Inside a job: runs COMMAND as a step of it (-n TASKS, -N NODES, --ntasks-per-node N,\n"
    "-l to label lines with the task's rank). Outside: submits a job whose tasks all run\n"
    "COMMAND (the options mean what sbatch's do) and waits for it (docs/from-slurm.md).\n";

constexpr auto kPollEvery = std::chrono::milliseconds(200);

volatile std::sig_atomic_t interrupts = 0;
void OnInterrupt(int) { interrupts = interrupts + 1; }

void CatchInterrupts() {
  struct sigaction action {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

// This process's environment, what of it a job may carry; what it leaves
// out is said on stderr.
Environment ShellEnvironment(const std::string& command) {
  std::vector<std::string> warnings;
  Environment inheritable = InheritableShellEnvironment(warnings);
  for (const std::string& warning : warnings) {
    std::fprintf(stderr, "%s: warning: %s\n", command.c_str(), warning.c_str());
  }
  return inheritable;
}

struct StepOptions {
  std::optional<int32_t> ntasks;
  std::optional<int32_t> nodes;
  std::optional<int32_t> ntasks_per_node;
  bool label = false;
  std::vector<std::string> command;
};

int32_t Count(const std::string& command, const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < 1 || value > 1 << 20) {
    Fail(command, "Invalid numeric value \"" + text + "\" for " + flag);
  }
  return static_cast<int32_t>(value);
}

// srun's own options inside a job; others are warned about and skipped.
StepOptions ParseStepOptions(const std::string& command, const std::vector<std::string>& args) {
  StepOptions options;
  size_t i = 0;
  const auto value = [&](const std::string& arg, const std::string& inline_value) -> std::string {
    if (!inline_value.empty()) return inline_value;
    if (i + 1 >= args.size()) Fail(command, "option " + arg + " requires an argument");
    return args[++i];
  };
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.empty() || arg[0] != '-') break;
    if (arg == "--") {
      ++i;
      break;
    }
    std::string name = arg;
    std::string inline_value;
    if (arg.starts_with("--") && arg.find('=') != std::string::npos) {
      name = arg.substr(0, arg.find('='));
      inline_value = arg.substr(arg.find('=') + 1);
    } else if (!arg.starts_with("--") && arg.size() > 2) {
      name = arg.substr(0, 2);
      inline_value = arg.substr(2);
    }
    if (name == "-n" || name == "--ntasks") {
      options.ntasks = Count(command, "--ntasks", value(arg, inline_value));
    } else if (name == "-N" || name == "--nodes") {
      options.nodes = Count(command, "--nodes", value(arg, inline_value));
    } else if (name == "--ntasks-per-node") {
      options.ntasks_per_node = Count(command, name, value(arg, inline_value));
    } else if (name == "-l" || name == "--label") {
      options.label = true;
    } else if (name == "-u" || name == "--unbuffered" || name == "-K" ||
               name == "--kill-on-bad-exit") {
      // Output is passed on as it comes; a failed task does not stop the others.
    } else {
      std::fprintf(stderr, "%s: warning: %s is ignored inside an allocation\n", command.c_str(),
                   name.c_str());
    }
  }
  options.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  if (options.command.empty()) Fail(command, "No command given to execute.");
  return options;
}

int RunStep(const std::string& command, int64_t job, const std::vector<std::string>& args) {
  StepOptions options = ParseStepOptions(command, args);
  // Without -n: the job's tasks (SLURM_NTASKS), unless the nodes were chosen.
  if (!options.ntasks && !options.nodes && !options.ntasks_per_node) {
    const std::string ntasks = Env("SLURM_NTASKS");
    if (!ntasks.empty()) options.ntasks = Count(command, "SLURM_NTASKS", ntasks);
  }
  const ApiClient client = ConnectOrFail(command);
  json body{{"command", options.command}, {"env", ShellEnvironment(command)}};
  if (options.ntasks) body["ntasks"] = *options.ntasks;
  if (options.nodes) body["nodes"] = *options.nodes;
  if (options.ntasks_per_node) body["ntasks_per_node"] = *options.ntasks_per_node;
  const std::string job_path = "/api/v1/jobs/" + std::to_string(job);
  Result<json> step = client.Post(job_path + "/steps", body);
  if (!step.ok())
    Fail(command,
         "Unable to create step for job " + std::to_string(job) + ": " + step.status().message());
  const std::string step_path = job_path + "/steps/" + std::to_string(step->value("step", 0));
  OutputFollower output(client, options.label);
  for (const json& task : (*step)["tasks"]) {
    output.Add(task.value("rank", 0),
               job_path + "/logs?task=" + std::to_string(task.value("task", 0)) +
                   "&step=" + std::to_string(step->value("step", 0)) +
                   "&rank=" + std::to_string(task.value("rank", 0)) + "&offset=");
  }
  CatchInterrupts();
  std::sig_atomic_t cancelled_at = 0;
  while (true) {
    if (interrupts > 1) Fail(command, "interrupted: the step's tasks are being stopped");
    if (interrupts > cancelled_at) {
      cancelled_at = interrupts;
      std::fprintf(stderr, "%s: interrupt: cancelling the step\n", command.c_str());
      (void)client.Post(step_path + "/cancel");
    }
    Result<json> now = client.Get(step_path);
    if (!now.ok()) {
      output.Flush();
      Fail(command, "step lost: " + now.status().message());
    }
    const bool ended = now->value("state", "running") != "running";
    if (output.Pump() && ended) {
      output.Flush();
      const int code = (*now)["exit_code"].is_number() ? (*now)["exit_code"].get<int>() : 1;
      for (const json& task : (*now)["tasks"]) {
        if (task["exit_code"].is_number() && task["exit_code"].get<int>() != 0) {
          std::fprintf(stderr, "%s: error: task %d: Exited with exit code %d\n", command.c_str(),
                       task.value("rank", 0), task["exit_code"].get<int>());
        }
      }
      return code;
    }
    std::this_thread::sleep_for(kPollEvery);
  }
}

// Outside a job: a job whose tasks all run the command, waited for.
bool SrunOnlyFlag(const std::string& arg) {
  return arg == "-l" || arg == "--label" || arg == "-u" || arg == "--unbuffered" || arg == "-K" ||
         arg == "--kill-on-bad-exit";
}

// srun from outside a job runs the command once per Slurm task, as Berth's
// own tasks (a gang: one process each), each a Slurm task with its
// variables (SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS...). sbatch's shape
// is one Berth task per node holding that node's share: with one Slurm
// task per node it is kept (`-N 2` is two nodes); with more, each node's
// share is split evenly among its Slurm tasks, which may then share nodes.
Status OneProcessPerSlurmTask(json& body) {
  const json layout = body.value("slurm_tasks_per_node", json::array());
  if (layout.empty()) return Status::Ok();
  const int64_t per_node = layout.front().get<int64_t>();
  for (const json& count : layout) {
    if (count.get<int64_t>() != per_node) {
      return InvalidArgument(
          "--ntasks: srun outside a job needs as many tasks on every node; give "
          "--ntasks-per-node");
    }
  }
  const int64_t tasks = body.value("tasks", int64_t{1}) * per_node;
  json& env = body["env"];
  if (!env.contains("SLURM_NTASKS"))
    env["SLURM_NTASKS"] = env["SLURM_NPROCS"] = std::to_string(tasks);
  if (per_node == 1) return Status::Ok();
  if (body.contains("task_shapes")) {
    // Nodes of unequal shares (--gpus per job packed) cannot be split evenly.
    return InvalidArgument(
        "--gpus: srun outside a job splits each node's share evenly among its tasks, and "
        "--gpus per job gives the nodes unequal shares; give --gpus-per-task");
  }
  for (const char* field : {"gpus", "cpus", "memory_mib"}) {
    if (!body.contains(field)) continue;
    const double share = body[field].get<double>() / static_cast<double>(per_node);
    if (std::string(field) != "cpus" && share != static_cast<double>(static_cast<int64_t>(share))) {
      return InvalidArgument(std::string(field == std::string("gpus") ? "--gpus" : "--mem") +
                             ": srun outside a job splits each node's share among its " +
                             std::to_string(per_node) + " tasks; it does not divide evenly");
    }
    body[field] = std::string(field) == "cpus" ? json(share) : json(static_cast<int64_t>(share));
  }
  body["tasks"] = tasks;
  body.erase("distinct_nodes");
  body["slurm_tasks_per_node"] = std::vector<int64_t>(static_cast<size_t>(tasks), 1);
  return Status::Ok();
}

int RunJob(const std::string& command, const std::vector<std::string>& args) {
  // sbatch's options, less srun's own (-l...), up to the command: the first
  // split where what follows reads as the command and its arguments.
  bool label = false;
  Result<SbatchRequest> request = InvalidArgument("No command given to execute.");
  for (size_t start = 0; start < args.size(); ++start) {
    std::vector<std::string> options;
    bool labelled = false;
    for (size_t i = 0; i < start; ++i) {
      if (SrunOnlyFlag(args[i])) {
        labelled |= args[i] == "-l" || args[i] == "--label";
      } else {
        options.push_back(args[i]);
      }
    }
    options.insert(options.end(), args.begin() + static_cast<std::ptrdiff_t>(start), args.end());
    Result<SbatchRequest> parsed = ParseSbatchArgs(options, WaitOption::kSeconds);
    if (!parsed.ok() || !parsed->script) {
      if (!parsed.ok() && !SrunOnlyFlag(args[start])) request = parsed;
      continue;
    }
    if (*parsed->script == args[start]) {
      request = std::move(parsed);
      label = labelled;
      break;
    }
  }
  if (!request.ok()) Fail(command, request.status().message());
  if (!request->script) Fail(command, "No command given to execute.");
  for (const std::string& warning : request->warnings) {
    std::fprintf(stderr, "%s: warning: %s\n", command.c_str(), warning.c_str());
  }
  // sbatch's --wait; srun's and salloc's -W/--wait=SEC mean something else.
  if (request->wait) {
    std::fprintf(stderr, "%s: warning: --wait has no Berth meaning; ignored\n", command.c_str());
  }
  std::vector<std::string> argv{*request->script};
  argv.insert(argv.end(), request->script_args.begin(), request->script_args.end());
  request->script_args.clear();
  std::vector<std::string> warnings;
  Result<json> body =
      SbatchBody(*request, WrapScript("exec \"$0\" \"$@\""),
                 std::filesystem::current_path().string(), ShellEnvironment(command), warnings);
  if (!body.ok()) Fail(command, body.status().message());
  body->erase("script");
  (*body)["command"] = argv;
  if (Status status = OneProcessPerSlurmTask(*body); !status.ok()) {
    Fail(command, status.message());
  }
  const ApiClient client = ConnectOrFail(command);
  Result<json> reply = client.Post("/api/v1/jobs", *body);
  if (!reply.ok()) Fail(command, "Unable to allocate resources: " + reply.status().message());
  const int64_t id = reply->value("id", int64_t{0});
  const std::string job_path = "/api/v1/jobs/" + std::to_string(id);
  std::fprintf(stderr, "%s: job %lld queued and waiting for resources\n", command.c_str(),
               static_cast<long long>(id));
  CatchInterrupts();
  OutputFollower output(client, label);
  bool following = false;
  std::sig_atomic_t cancelled_at = 0;
  while (true) {
    if (interrupts > cancelled_at) {
      cancelled_at = interrupts;
      std::fprintf(stderr, "%s: interrupt: cancelling job %lld\n", command.c_str(),
                   static_cast<long long>(id));
      (void)client.Post(job_path + "/cancel");
    }
    Result<json> job = client.Get(job_path);
    if (!job.ok()) Fail(command, "job lost: " + job.status().message());
    const std::string state = job->value("state", "");
    if (!following && !(*job)["placement"].empty()) {
      following = true;
      const int32_t tasks = job->value("tasks", 1);
      for (int32_t task = 0; task < tasks; ++task) {
        output.Add(task, job_path + "/logs?task=" + std::to_string(task) + "&offset=");
      }
    }
    const bool drained = following ? output.Pump() : true;
    if (EndedState(state) && drained) {
      output.Flush();
      if ((*job)["exit_code"].is_number()) return (*job)["exit_code"].get<int>();
      if ((*job)["signal"].is_number()) return 128 + (*job)["signal"].get<int>();
      return state == "succeeded" ? 0 : 1;
    }
    std::this_thread::sleep_for(kPollEvery);
  }
}

}  // namespace

int Srun(int argc, char** argv) {
  const std::string command = argv[0];
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (AsksForHelp(args)) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::string job = Env("SLURM_JOB_ID");
  if (job.empty()) job = Env("BERTH_JOB_ID");
  if (job.empty()) return RunJob(command, args);
  char* end = nullptr;
  const long long id = std::strtoll(job.c_str(), &end, 10);
  if (*end != '\0' || id < 1) Fail(command, "SLURM_JOB_ID: not a job id: '" + job + "'");
  return RunStep(command, id, args);
}

}  // namespace berth::cli::slurm
