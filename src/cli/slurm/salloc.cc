// salloc: an interactive allocation. It submits a job whose tasks hold
// their share of the nodes, waits until it runs, then runs a command here
// ($SHELL by default) with the allocation's variables (SLURM_JOB_ID...), so
// that srun in it runs steps of the job; when the command ends, the job is
// ended (cancelled) and salloc exits with the command's code
// (docs/from-slurm.md).
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cli/slurm/sbatch_args.h"
#include "cli/slurm/slurm_client.h"
#include "cli/slurm/slurm_commands.h"
#include "common/hostlist.h"

namespace berth::cli::slurm {
namespace {

using nlohmann::json;

constexpr char kUsage[] =
    "Usage: salloc [OPTIONS] [COMMAND [ARGS...]]\n"
    "Gets an allocation (the options mean what sbatch's do), then runs COMMAND ($SHELL by\n"
    "default) here with SLURM_JOB_ID and the allocation's variables; srun in it runs steps\n"
    "on the allocation. The allocation ends with the command (docs/from-slurm.md).\n";

// The allocation's variables, for the command salloc runs.
void SetAllocationEnvironment(const json& job) {
  const std::string id = std::to_string(job.value("id", int64_t{0}));
  std::vector<std::string> nodes;
  std::vector<int> per_node;
  for (const json& task : job["placement"]) {
    const std::string node = task.value("node", "");
    if (nodes.empty() || nodes.back() != node) {
      nodes.push_back(node);
      per_node.push_back(0);
    }
    ++per_node.back();
  }
  const std::string nodelist = CompressHostlist(nodes);
  const std::string nnodes = std::to_string(nodes.size());
  const std::string ntasks = std::to_string(job.value("tasks", 1));
  for (const auto& [name, value] : std::vector<std::pair<const char*, std::string>>{
           {"SLURM_JOB_ID", id},
           {"SLURM_JOBID", id},
           {"SLURM_JOB_NAME", job.value("name", "")},
           {"SLURM_JOB_NODELIST", nodelist},
           {"SLURM_NODELIST", nodelist},
           {"SLURM_JOB_NUM_NODES", nnodes},
           {"SLURM_NNODES", nnodes},
           {"SLURM_NTASKS", ntasks},
           {"SLURM_NPROCS", ntasks},
           {"SLURM_TASKS_PER_NODE", TasksPerNodeString(per_node)},
           {"SLURM_SUBMIT_DIR", std::filesystem::current_path().string()}}) {
    ::setenv(name, value.c_str(), 1);
  }
}

}  // namespace

int Salloc(int argc, char** argv) {
  const std::string command = argv[0];
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (AsksForHelp(args)) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  Result<SbatchRequest> request = ParseSbatchArgs(args, WaitOption::kSeconds);
  if (!request.ok()) Fail(command, request.status().message());
  for (const std::string& warning : request->warnings) {
    std::fprintf(stderr, "%s: warning: %s\n", command.c_str(), warning.c_str());
  }
  // sbatch's --wait; srun's and salloc's -W/--wait=SEC mean something else.
  if (request->wait) {
    std::fprintf(stderr, "%s: warning: --wait has no Berth meaning; ignored\n", command.c_str());
  }
  std::vector<std::string> run;
  if (request->script) {
    run.push_back(*request->script);
    run.insert(run.end(), request->script_args.begin(), request->script_args.end());
  } else {
    const char* shell = std::getenv("SHELL");
    run.push_back(shell != nullptr && *shell != '\0' ? shell : "/bin/sh");
  }
  request->script.reset();
  request->script_args.clear();
  if (!request->options.name) request->options.name = "interactive";
  std::vector<std::string> warnings;
  // The allocation's tasks hold their share until it ends.
  // Its holders need no environment: the shell's reaches each srun step.
  Result<json> body = SbatchBody(*request, WrapScript("exec sleep infinity"),
                                 std::filesystem::current_path().string(), {}, warnings);
  if (!body.ok()) Fail(command, body.status().message());
  (*body)["batch"] = true;
  const ApiClient client = ConnectOrFail(command);
  Result<json> reply = client.Post("/api/v1/jobs", *body);
  if (!reply.ok()) Fail(command, "Job submit/allocate failed: " + reply.status().message());
  const int64_t id = reply->value("id", int64_t{0});
  const std::string job_path = "/api/v1/jobs/" + std::to_string(id);
  std::fprintf(stderr, "%s: Pending job allocation %lld\n", command.c_str(),
               static_cast<long long>(id));
  // While waiting, Ctrl-C gives the allocation up.
  std::signal(SIGINT, SIG_IGN);
  json job;
  while (true) {
    Result<json> now = client.Get(job_path);
    if (!now.ok()) Fail(command, "job " + std::to_string(id) + " lost: " + now.status().message());
    job = *now;
    const std::string state = job.value("state", "");
    if (state == "running") break;
    if (EndedState(state)) {
      Fail(command, "Job allocation " + std::to_string(id) + " has been revoked (" + state + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  std::fprintf(stderr, "%s: Granted job allocation %lld\n", command.c_str(),
               static_cast<long long>(id));
  SetAllocationEnvironment(job);
  const pid_t child = ::fork();
  if (child == 0) {
    std::signal(SIGINT, SIG_DFL);
    std::vector<char*> child_argv;
    for (std::string& arg : run) child_argv.push_back(arg.data());
    child_argv.push_back(nullptr);
    ::execvp(child_argv[0], child_argv.data());
    std::fprintf(stderr, "%s: error: cannot run %s\n", command.c_str(), child_argv[0]);
    ::_exit(127);
  }
  int status = 0;
  while (child > 0 && ::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  std::fprintf(stderr, "%s: Relinquishing job allocation %lld\n", command.c_str(),
               static_cast<long long>(id));
  (void)client.Post(job_path + "/cancel");
  if (child < 0) return 1;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace berth::cli::slurm
