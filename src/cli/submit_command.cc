// `berth submit`: flags (or a script with #BERTH / #SBATCH lines, or a
// Kubernetes manifest with -f) to a submission; prints the job id; `--wait`
// follows the job to its end and exits with its exit code; `--dry-run`
// prints the request instead of sending it.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <thread>

#include "cli/api_client.h"
#include "cli/client_commands.h"
#include "cli/kube_manifest.h"
#include "cli/slurm/exported_env.h"
#include "cli/submit_options.h"
#include "cli/table.h"

namespace berth::cli {
namespace {

struct SubmitFlags {
  ClientFlags client;
  SubmitOptions options;
  bool preemptible = false;
  bool hold = false;
  bool no_requeue = false;
  bool wait_for_nodes = false;
  bool gpus_in_one_group = false;
  bool container_mount_home = false;
  bool wait = false;
  bool dry_run = false;
  std::string manifest;         // -f: a Kubernetes Pod or Job; "-" is stdin
  std::string idempotency_key;  // empty: a random one per command
  std::vector<std::string> args;
};

// A key the server keeps with the submission, so that the request sent
// again after a lost answer (or to the new leader) returns the same jobs
// instead of queueing them twice: 128 random bits.
std::string RandomIdempotencyKey() {
  std::random_device random;
  std::string key = "berth-cli-";
  for (int i = 0; i < 4; ++i) {
    char word[9];
    std::snprintf(word, sizeof(word), "%08x", static_cast<unsigned>(random()));
    key += word;
  }
  return key;
}

// A lone argument that is a file starting with "#!" or carrying directives
// is a script (read here, like sbatch); anything else is the command to run.
std::optional<std::string> ReadScript(const std::vector<std::string>& args) {
  if (args.size() != 1 || !std::filesystem::is_regular_file(args[0])) return std::nullopt;
  std::ifstream in(args[0], std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  const std::string script = text.str();
  if (script.starts_with("#!") || script.find("#BERTH") != std::string::npos ||
      script.find("#SBATCH") != std::string::npos) {
    return script;
  }
  return std::nullopt;
}

// The exit code `--wait` ends with: the job's own, 128 + signal, or 1.
int JobExitCode(const nlohmann::json& job) {
  const std::string state = job.value("state", "");
  if (state == "succeeded") return 0;
  if (job.contains("exit_code") && job["exit_code"].is_number()) {
    const int code = job["exit_code"].get<int>();
    if (code > 0) return code;
  }
  if (job.contains("signal") && job["signal"].is_number()) return 128 + job["signal"].get<int>();
  return 1;
}

std::string Progress(const nlohmann::json& job) {
  std::string line = "job " + std::to_string(job.value("id", int64_t{0})) + ": " +
                     job.value("state", std::string("?"));
  if (job.value("state", "") == "pending") {
    if (const std::string reason = job.value("reason", ""); !reason.empty()) line += " (" + reason;
    if (job["position"].is_number()) {
      line += "; position " + std::to_string(job["position"].get<int64_t>() + 1);
    }
    if (const std::string eta = EtaSummary(job, ZoneName::kLeftOut); !eta.empty()) {
      line += "; " + eta;
    }
    if (!job.value("reason", "").empty()) line += ")";
  } else if (job.value("state", "") == "running" && job["placement"].is_array() &&
             !job["placement"].empty()) {
    line += " on " + job["placement"][0].value("node", "");
  }
  return line;
}

int WaitForEnd(const ApiClient& client, int64_t id) {
  std::string last;
  while (true) {
    Result<nlohmann::json> job = client.Get("/api/v1/jobs/" + std::to_string(id));
    if (!job.ok()) Exit("submit", job.status());
    const std::string line = Progress(*job);
    if (line != last) {
      std::fprintf(stderr, "%s\n", line.c_str());
      last = line;
    }
    const std::string state = job->value("state", "");
    if (EndedState(state)) {
      return JobExitCode(*job);
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

// The body a Kubernetes manifest asks for, the command line's flags over it.
nlohmann::json ManifestBody(const SubmitFlags& flags) {
  if (!flags.args.empty()) {
    Exit("submit", InvalidArgument("-f: the manifest says what to run; give no command as well"));
  }
  std::stringstream text;
  if (flags.manifest == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(flags.manifest, std::ios::binary);
    if (!in) Exit("submit", InvalidArgument("-f: cannot read '" + flags.manifest + "'"));
    text << in.rdbuf();
  }
  Result<KubeJob> job = ParseKubeManifest(text.str());
  if (!job.ok()) Exit("submit", InvalidArgument(flags.manifest + ": " + job.status().message()));
  for (const std::string& warning : job->warnings) {
    std::fprintf(stderr, "berth submit: %s: %s\n", flags.manifest.c_str(), warning.c_str());
  }
  Result<nlohmann::json> body = KubeSubmissionBody(*job, flags.options);
  if (!body.ok()) Exit("submit", body.status());
  return *body;
}

// The body a command or a script (with its directives) asks for.
nlohmann::json CommandBody(SubmitFlags& flags) {
  if (flags.args.empty()) {
    Exit("submit",
         InvalidArgument("nothing to run: give a script, -f MANIFEST or -- COMMAND ARGS..."));
  }
  std::vector<std::string> command = flags.args;
  std::string script;
  if (std::optional<std::string> text = ReadScript(flags.args)) {
    script = *text;
    command.clear();
    Result<ScriptDirectives> directives = ParseScriptDirectives(script);
    if (!directives.ok())
      Exit("submit", InvalidArgument(flags.args[0] + ": " + directives.status().message()));
    for (const std::string& warning : directives->warnings) {
      std::fprintf(stderr, "berth submit: %s: %s\n", flags.args[0].c_str(), warning.c_str());
    }
    // Command line over #BERTH over #SBATCH.
    flags.options.FillFrom(directives->berth);
    flags.options.FillFrom(directives->sbatch);
  }
  if (flags.container_mount_home) flags.options.container_mount_home = true;
  // A container sees only the host paths it mounts (and the workdir is
  // one of them): the current directory is not mounted unasked.
  if (!flags.options.workdir && !flags.options.container_image) {
    flags.options.workdir = std::filesystem::current_path().string();
  }
  Result<nlohmann::json> body = SubmissionBody(flags.options, command, script);
  if (!body.ok()) Exit("submit", body.status());
  // A script's `#SBATCH --export=...` brings what it names of this shell's
  // environment, as sbatch's does, under --env; without one, berth submit
  // sends none of it.
  if (flags.options.export_env) {
    std::vector<std::string> warnings;
    const slurm::Environment inheritable = slurm::InheritableShellEnvironment(warnings);
    for (const std::string& warning : warnings) {
      std::fprintf(stderr, "berth submit: warning: %s\n", warning.c_str());
    }
    Result<slurm::Environment> exported =
        slurm::ExportedEnvironment(*flags.options.export_env, inheritable);
    if (!exported.ok()) Exit("submit", exported.status());
    nlohmann::json& env = (*body)["env"];
    if (!env.is_object()) env = nlohmann::json::object();
    for (auto& [name, value] : *exported) {
      if (!env.contains(name)) env[name] = std::move(value);
    }
  }
  return *body;
}

void RunSubmit(SubmitFlags& flags) {
  if (flags.preemptible) flags.options.preemptible = true;
  if (flags.hold) flags.options.hold = true;
  if (flags.no_requeue) flags.options.requeue = false;
  if (flags.wait_for_nodes) flags.options.wait_for_nodes = true;
  if (flags.gpus_in_one_group) flags.options.gpus_in_one_group = true;
  nlohmann::json body = flags.manifest.empty() ? CommandBody(flags) : ManifestBody(flags);
  if (flags.dry_run) {
    if (!flags.idempotency_key.empty()) body["idempotency_key"] = flags.idempotency_key;
    std::printf("%s\n", body.dump(2).c_str());
    std::exit(kExitOk);
  }
  body["idempotency_key"] =
      flags.idempotency_key.empty() ? RandomIdempotencyKey() : flags.idempotency_key;
  const ApiClient client = ConnectOrExit("submit", flags.client);
  Result<nlohmann::json> reply = client.Post("/api/v1/jobs", body, follow::Replay::kSafe);
  if (!reply.ok()) Exit("submit", reply.status());
  const int64_t id = reply->value("id", int64_t{0});
  if (flags.client.json) {
    std::printf("%s\n", reply->dump().c_str());
  } else {
    std::printf("%lld\n", static_cast<long long>(id));
  }
  std::fflush(stdout);
  std::exit(flags.wait ? WaitForEnd(client, id) : kExitOk);
}

}  // namespace

void AddSubmitCommand(CLI::App& app) {
  auto flags = std::make_shared<SubmitFlags>();
  CLI::App* submit = app.add_subcommand(
      "submit",
      "Submit a job: berth submit [flags] -- CMD ARGS..., berth submit script.sh, or berth "
      "submit -f pod.yaml");
  SubmitOptions& o = flags->options;
  submit->add_option("--gpus", o.gpus, "GPUs per task (0: CPU only; default 1)");
  submit->add_option("--tasks", o.tasks, "Tasks in the gang (all start together)");
  submit->add_option("--nodes", o.nodes, "Nodes: one task per node unless --tasks says");
  submit->add_option("--gpu-type", o.gpu_type,
                     "GPU model, e.g. H100-80GB, or any of several: 'A100-80GB|H100-80GB'");
  submit->add_option("-C,--constraint", o.constraint,
                     "Node features, as Slurm's: ib, 'a100&ib', 'h100|a100', '!spot', "
                     "rack=r1 (a label)");
  submit->add_option("-w,--nodelist", o.nodelist, "Only these nodes: gpu[01-04],gpu07");
  submit->add_option("-x,--exclude", o.exclude, "Never these nodes: gpu[01-04],gpu07");
  submit->add_flag("--wait-for-nodes", flags->wait_for_nodes,
                   "Queue it even if no node registered now could ever host it");
  submit->add_flag("--gpus-in-one-group", flags->gpus_in_one_group,
                   "Each task's GPUs inside one interconnect group (NVLink island) of its node");
  submit->add_option("--cpus", o.cpus, "CPUs per task");
  submit->add_option("--mem", o.mem, "Memory per task: 512M, 16G, ...");
  submit->add_option("--time", o.time, "Time limit: HH:MM:SS, D-HH:MM:SS, 90m, 2h");
  submit->add_option("--estimate", o.estimate, "Your runtime estimate (same formats)");
  submit->add_option("--name", o.name, "Job name");
  submit->add_option("--priority", o.priority, "Integer, or low / normal / high");
  submit->add_option("--queue", o.queue, "Team queue");
  submit->add_flag("--preemptible", flags->preemptible, "May be preempted for higher work");
  submit->add_option("--grace", o.grace, "SIGTERM-to-SIGKILL grace: seconds or a duration");
  submit->add_option("--signal", o.signal,
                     "[B:]SIG[@secs]: send SIG secs (60) before the time limit; B: the batch "
                     "shell (task 0's main process) only");
  submit->add_option("--after", o.after, "Dependency: ID, ID:afterok|afterany|afternotok");
  submit->add_option("--array", o.array, "Array: 0-9, 1,3,5-7, 0-15:4, 0-99%10");
  submit->add_option("--env", o.env, "Environment: KEY=VALUE (repeatable)");
  submit->add_option("--workdir", o.workdir, "Working directory (default: this one)");
  submit->add_option("-o,--output", o.output,
                     "stdout to this file, relative to the working directory, opened as you; "
                     "%j %x %u %A %a %N %t %% as in Slurm (default: the task's log)");
  submit->add_option("-e,--error", o.error, "stderr to this file (default: with stdout)");
  submit->add_option("--open-mode", o.open_mode, "append or truncate (the default) the files");
  submit->add_option("--container-image", o.container_image,
                     "Run each task in this image (podman or docker on the node)");
  submit->add_option("--container-mounts", o.container_mounts,
                     "Host paths in the container: SRC:DST[:ro],... (within the server's "
                     "allow-list)");
  submit->add_option("--container-workdir", o.container_workdir,
                     "Working directory in the container (default: --workdir if given, else "
                     "the image's)");
  submit->add_flag("--container-mount-home", flags->container_mount_home,
                   "Mount your home directory at the same path");
  submit->add_option("--container-pull", o.container_pull,
                     "When the node pulls the image: missing, never, always (default: the "
                     "node's)");
  submit->add_option("--retries", o.retries, "Times a failed run is retried");
  submit->add_flag("--hold", flags->hold, "Submit held until `berth release`");
  submit->add_flag("--no-requeue", flags->no_requeue,
                   "Fail instead of running again elsewhere if its node is lost");
  submit->add_flag("--wait", flags->wait, "Follow the job until it ends; exit with its exit code");
  submit->add_option("-f,--filename", flags->manifest,
                     "A Kubernetes Pod (v1) or Job (batch/v1) manifest, YAML ('-': stdin); "
                     "flags given too override it (docs/cli.md)");
  submit->add_flag("--dry-run", flags->dry_run,
                   "Print the request's JSON instead of submitting it; needs no server");
  submit->add_option("--idempotency-key", flags->idempotency_key,
                     "Submitting again with the same key returns the first submission's jobs "
                     "(default: a random key, so retries of this command's request are safe)");
  AddClientFlags(*submit, flags->client);
  submit->add_option("command", flags->args, "A script, or -- and the command with its arguments");
  submit->callback([flags] { RunSubmit(*flags); });
}

}  // namespace berth::cli
