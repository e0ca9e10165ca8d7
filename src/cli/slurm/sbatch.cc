// sbatch: submits a batch script to Berth as `berth submit SCRIPT` does
// (docs/from-slurm.md).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>
#include <tuple>

#include "cli/slurm/sbatch_args.h"
#include "cli/slurm/sbatch_wait.h"
#include "cli/slurm/slurm_client.h"
#include "cli/slurm/slurm_commands.h"

namespace berth::cli::slurm {
namespace {

// How often sbatch --wait asks whether its job has ended.
constexpr auto kPollEvery = std::chrono::milliseconds(500);

constexpr char kUsage[] =
    "Usage: sbatch [OPTIONS] SCRIPT | sbatch [OPTIONS] --wrap COMMAND\n"
    "Submits a batch script to Berth; its #SBATCH lines and these options mean what\n"
    "berth submit reads them as (docs/from-slurm.md). -W/--wait: exit when the job\n"
    "ends, with its exit code (an array's highest).\n";

// Makes the submit safe to resend after a lost answer (one job, not two).
std::string IdempotencyKey() {
  std::random_device random;
  std::string key = "berth-sbatch-";
  for (int i = 0; i < 4; ++i) {
    char word[9];
    std::snprintf(word, sizeof(word), "%08x", static_cast<unsigned>(random()));
    key += word;
  }
  return key;
}

// The cluster's largest node (most GPUs, then CPUs, then memory): what a
// job without --nodes is packed against, and what --exclusive takes.
// None when the server does not say (the job then asks for one node).
std::optional<NodeSize> LargestNode(const ApiClient& client) {
  Result<nlohmann::json> reply = client.Get("/api/v1/nodes");
  if (!reply.ok() || !reply->contains("nodes") || !(*reply)["nodes"].is_array()) {
    return std::nullopt;
  }
  std::optional<NodeSize> largest;
  for (const nlohmann::json& node : (*reply)["nodes"]) {
    const NodeSize size{.gpus = node.contains("gpus") && node["gpus"].is_array()
                                    ? static_cast<int64_t>(node["gpus"].size())
                                    : 0,
                        .cpus = node.value("cpu_milli", int64_t{0}) / 1000,
                        .memory_mib = node.value("memory_mib", int64_t{0})};
    if (!largest || std::tie(size.gpus, size.cpus, size.memory_mib) >
                        std::tie(largest->gpus, largest->cpus, largest->memory_mib)) {
      largest = size;
    }
  }
  return largest;
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

std::string ReadAll(std::istream& in) {
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// -W/--wait: every job submitted (an array's elements) ended; the exit
// code sbatch_wait.h gives. Each poll asks only for the jobs still running.
int WaitForJobs(const std::string& command, const ApiClient& client, std::vector<int64_t> ids) {
  std::vector<nlohmann::json> ended;
  while (true) {
    std::vector<int64_t> waiting;
    for (int64_t id : ids) {
      std::optional<nlohmann::json> job = FindJob(command, client, id);
      if (!job)
        Fail(command, "Job " + std::to_string(id) + " no longer found and exit code not found");
      if (WaitedExitCode({*job})) {
        ended.push_back(std::move(*job));
      } else {
        waiting.push_back(id);
      }
    }
    if (waiting.empty()) return *WaitedExitCode(ended);
    ids = std::move(waiting);
    std::this_thread::sleep_for(kPollEvery);
  }
}

}  // namespace

int Sbatch(int argc, char** argv) {
  const std::string command = argv[0];
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (AsksForHelp(args)) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  Result<SbatchRequest> request = ParseSbatchArgs(args);
  if (!request.ok()) Fail(command, request.status().message());
  for (const std::string& warning : request->warnings) {
    std::fprintf(stderr, "%s: warning: %s\n", command.c_str(), warning.c_str());
  }
  std::string script;
  if (request->wrap) {
    script = WrapScript(*request->wrap);
  } else if (request->script) {
    std::ifstream in(*request->script, std::ios::binary);
    if (!in) Fail(command, "Unable to open file " + *request->script);
    script = ReadAll(in);
  } else {
    script = ReadAll(std::cin);
  }
  request->submit_host = HostName();
  // SBATCH_EXPORT is --export's default, under the command line and over
  // the script's #SBATCH lines, as Slurm's input variables are.
  if (const char* exported = std::getenv("SBATCH_EXPORT");
      !request->options.export_env && exported != nullptr) {
    request->options.export_env = exported;
  }
  const ApiClient client = ConnectOrFail(command);
  std::vector<std::string> warnings;
  const Environment inheritable = InheritableShellEnvironment(warnings);
  Result<nlohmann::json> body =
      SbatchBody(*request, script, std::filesystem::current_path().string(), inheritable, warnings,
                 LargestNode(client));
  for (const std::string& warning : warnings) {
    std::fprintf(stderr, "%s: warning: %s\n", command.c_str(), warning.c_str());
  }
  if (!body.ok()) Fail(command, body.status().message());
  (*body)["idempotency_key"] = IdempotencyKey();
  // The script runs once, on the first node; srun in it uses the rest.
  (*body)["batch"] = true;
  Result<nlohmann::json> reply = client.Post("/api/v1/jobs", *body, follow::Replay::kSafe);
  if (!reply.ok()) Fail(command, "Batch job submission failed: " + reply.status().message());
  const long long id = static_cast<long long>(reply->value("id", int64_t{0}));
  if (request->parsable) {
    std::printf("%lld\n", id);
  } else {
    std::printf("Submitted batch job %lld\n", id);
  }
  if (!request->wait) return 0;
  std::fflush(stdout);
  std::vector<int64_t> ids{id};
  if (const auto all = reply->find("ids");
      all != reply->end() && all->is_array() && !all->empty()) {
    ids = all->get<std::vector<int64_t>>();
  }
  return WaitForJobs(command, client, ids);
}

}  // namespace berth::cli::slurm
