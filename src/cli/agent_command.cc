#include "cli/agent_command.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "agent/agent.h"
#include "agent/fake_gpus.h"
#include "agent/nvml_inventory.h"
#include "agent/supervisor.h"
#include "cli/command_line.h"
#include "cli/daemon_commands.h"
#include "common/clock.h"
#include "core/constraint.h"

namespace berth::cli {
namespace {

// What each task's supervisor runs: berth-supervisor from beside this
// binary when it is there (it loads in about a millisecond), else this very
// binary's `supervise-task` (even if the file was replaced since).
std::vector<std::string> SupervisorCommand() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const std::filesystem::path lean = self.parent_path() / "berth-supervisor";
    if (::access(lean.c_str(), X_OK) == 0) return {lean.string()};
  }
  return {"/proc/self/exe", agent::kSuperviseCommand};
}

struct AgentFlags {
  std::string server;
  std::string ca_file;
  std::string token;
  std::string token_file;
  std::string node;
  std::string listen = "127.0.0.1:0";
  std::string advertise;
  std::string state_dir;
  std::string fake_gpus;
  int32_t fake_topology = 1;
  std::string fake_gpu_devices;
  std::string cgroups = "auto";
  int64_t task_pids_max = 32768;
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string gpu_type;
  std::string heartbeat_interval = "1s";
  std::string max_backoff = "30s";
  std::string keep_finished = "24h";
  std::vector<std::string> labels;
  std::vector<std::string> features;
  bool stop_tasks_on_exit = false;
  bool allow_root_jobs = false;
  std::string container_runtime = "podman";
  std::string container_runtime_path;
  std::vector<std::string> container_runtime_args;
  std::string container_shm_size = "8g";
  std::string container_pull = "missing";
};

// The fake inventory, or NVML; a machine without the NVIDIA library is a
// node without GPUs (one binary for both), any other NVML failure is fatal.
std::unique_ptr<agent::GpuInventory> MakeInventory(const AgentFlags& flags) {
  if (!flags.fake_gpus.empty()) {
    Result<agent::FakeGpuSpec> spec = agent::ParseFakeGpus(flags.fake_gpus, flags.fake_topology);
    if (!spec.ok()) FailCommand("agent", spec.status().message());
    Result<std::vector<std::string>> devices =
        agent::ParseFakeGpuDevices(flags.fake_gpu_devices, *spec);
    if (!devices.ok()) FailCommand("agent", devices.status().message());
    spec->device_paths = std::move(*devices);
    return std::make_unique<agent::FakeGpuInventory>(std::move(*spec));
  }
  Result<std::unique_ptr<agent::NvmlInventory>> nvml =
      agent::NvmlInventory::Open({flags.nvml_library, flags.gpu_type});
  if (nvml.ok()) return std::move(*nvml);
  if (nvml.status().code() == StatusCode::kUnavailable &&
      nvml.status().message().find("cannot load") != std::string::npos) {
    spdlog::warn("{}; this node registers without GPUs", nvml.status().message());
    return std::make_unique<agent::FakeGpuInventory>(agent::FakeGpuSpec{0, "", 0, 1});
  }
  FailCommand("agent", nvml.status().message());
}

std::string ReadToken(const AgentFlags& flags) {
  if (!flags.token.empty()) return flags.token;
  if (!flags.token_file.empty()) {
    std::ifstream in(flags.token_file);
    std::string token;
    if (!in || !std::getline(in, token) || token.empty()) {
      FailCommand("agent", "--token-file: cannot read a token from " + flags.token_file);
    }
    return token;
  }
  if (const char* env = std::getenv("BERTH_AGENT_TOKEN")) return env;
  FailCommand("agent", "--token: required (or --token-file, or $BERTH_AGENT_TOKEN)");
}

void RunAgent(const AgentFlags& flags) {
  agent::AgentOptions options;
  options.server_url = flags.server;
  options.ca_file = flags.ca_file;
  options.token = ReadToken(flags);
  options.node = flags.node;
  options.listen = flags.listen;
  options.advertise = flags.advertise;
  options.state_dir = flags.state_dir;
  const auto duration = [](const std::string& text, const std::string& flag) {
    Result<std::chrono::milliseconds> parsed = ParseDurationFlag(text, flag);
    if (!parsed.ok()) FailCommand("agent", parsed.status().message());
    return *parsed;
  };
  options.heartbeat_interval = duration(flags.heartbeat_interval, "--heartbeat-interval");
  options.max_backoff = duration(flags.max_backoff, "--max-backoff");
  options.keep_finished =
      core::Duration::Millis(duration(flags.keep_finished, "--keep-finished").count());
  for (const std::string& label : flags.labels) {
    const size_t equals = label.find('=');
    if (equals == std::string::npos || equals == 0) {
      FailCommand("agent", "--label: expected KEY=VALUE, got '" + label + "'");
    }
    options.labels[label.substr(0, equals)] = label.substr(equals + 1);
  }
  for (const std::string& feature : flags.features) {
    if (!core::IsFeatureName(feature)) {
      FailCommand("agent", "--feature: '" + feature +
                               "' is not a feature name (1..64 of A-Z a-z 0-9 _ - . : / + =)");
    }
    options.features.push_back(feature);
  }
  options.stop_tasks_on_exit = flags.stop_tasks_on_exit;
  options.allow_root_jobs = flags.allow_root_jobs;
  options.supervisor_command = SupervisorCommand();
  if (flags.cgroups == "auto") {
    options.cgroups = agent::CgroupMode::kAuto;
  } else if (flags.cgroups == "required") {
    options.cgroups = agent::CgroupMode::kRequired;
  } else if (flags.cgroups == "off") {
    options.cgroups = agent::CgroupMode::kOff;
  } else {
    FailCommand("agent", "--cgroups: expected auto, required or off, got '" + flags.cgroups + "'");
  }
  if (flags.task_pids_max < 1) {
    FailCommand("agent",
                "--task-pids-max: must be at least 1, got " + std::to_string(flags.task_pids_max));
  }
  options.task_pids_max = flags.task_pids_max;
  if (flags.container_runtime == "podman") {
    options.containers.kind = agent::RuntimeKind::kPodman;
  } else if (flags.container_runtime == "docker") {
    options.containers.kind = agent::RuntimeKind::kDocker;
  } else if (flags.container_runtime == "off") {
    options.containers.kind.reset();
  } else {
    FailCommand("agent", "--container-runtime: expected podman, docker or off, got '" +
                             flags.container_runtime + "'");
  }
  options.containers.binary = flags.container_runtime_path;
  options.containers.extra_args = flags.container_runtime_args;
  options.containers.shm_size = flags.container_shm_size;
  if (std::optional<protocol::ImagePull> pull = protocol::ParseImagePull(flags.container_pull)) {
    options.containers.default_pull = *pull;
  } else {
    FailCommand("agent", "--container-pull: expected missing, never or always, got '" +
                             flags.container_pull + "'");
  }

  // Block the stop signals in every thread the agent starts; this one waits.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  static const SystemClock clock;
  Result<std::unique_ptr<agent::Agent>> started =
      agent::Agent::Start(std::move(options), MakeInventory(flags), clock);
  if (!started.ok()) FailCommand("agent", started.status().message());
  // For operators and tests: which process is this node's agent.
  std::ofstream(flags.state_dir + "/agent.pid") << ::getpid() << "\n";
  std::fprintf(stderr, "berth agent: node %s serving on %s\n", flags.node.c_str(),
               (*started)->address().c_str());
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  std::fprintf(stderr, "berth agent: node %s stopping (signal %d); %s\n", flags.node.c_str(),
               signal_number,
               flags.stop_tasks_on_exit ? "stopping its tasks" : "tasks keep running");
  (*started)->Stop();
  std::exit(0);
}

}  // namespace

Result<std::chrono::milliseconds> ParseDurationFlag(const std::string& text,
                                                    const std::string& flag) {
  const auto bad = [&] {
    return InvalidArgument(flag + ": expected a duration such as 500ms, 2s, 5m or 24h, got '" +
                           text + "'");
  };
  int64_t number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc() || end == text.data() || number < 0) return bad();
  const std::string unit(end, text.data() + text.size());
  if (unit == "ms") return std::chrono::milliseconds(number);
  if (unit.empty() || unit == "s") return std::chrono::milliseconds(number * 1000);
  if (unit == "m") return std::chrono::milliseconds(number * 60'000);
  if (unit == "h") return std::chrono::milliseconds(number * 3'600'000);
  return bad();
}

void AddAgentCommands(CLI::App& app) {
  auto flags = std::make_shared<AgentFlags>();
  CLI::App* agent = app.add_subcommand("agent", DaemonDescription("agent"));
  agent
      ->add_option("--server", flags->server,
                   "Server URL, e.g. http://10.0.0.1:8080, or several separated by commas "
                   "(a leader and its standbys: the agent follows the leader)")
      ->required();
  agent->add_option("--ca-file", flags->ca_file,
                    "With an https server: the CA certificate that signed it");
  agent->add_option("--token", flags->token, "Agent token (visible in ps; prefer --token-file)");
  agent->add_option("--token-file", flags->token_file, "File holding the agent token");
  agent->add_option("--node", flags->node, "This node's name (the token's node)")->required();
  agent->add_option("--listen", flags->listen, "Address for the logs endpoint (port 0: any)")
      ->capture_default_str();
  agent->add_option("--advertise", flags->advertise,
                    "HOST:PORT the server and gang peers use (default: the listen address)");
  agent->add_option("--state-dir", flags->state_dir, "Tasks, logs and exit statuses live here")
      ->required();
  agent->add_option("--fake-gpus", flags->fake_gpus,
                    "Simulated GPUs, e.g. 8xH100-80GB (default: NVML)");
  agent
      ->add_option("--fake-topology", flags->fake_topology,
                   "Interconnect groups among the fake GPUs")
      ->capture_default_str();
  agent->add_option("--fake-gpu-devices", flags->fake_gpu_devices,
                    "With --fake-gpus: a device file per GPU, comma-separated (stand-in nodes "
                    "made with mknod), denied to tasks not given that GPU");
  agent
      ->add_option("--cgroups", flags->cgroups,
                   "Tasks in cgroups of their own: auto (where the agent can create them), "
                   "required (else refuse to start) or off")
      ->capture_default_str();
  agent
      ->add_option("--task-pids-max", flags->task_pids_max,
                   "Each task's limit on processes and threads (pids.max)")
      ->capture_default_str();
  agent->add_option("--nvml-library", flags->nvml_library, "The NVML library to dlopen")
      ->capture_default_str();
  agent->add_option("--gpu-type", flags->gpu_type,
                    "The gpu_type to register (default: from the NVML device name)");
  agent->add_option("--heartbeat-interval", flags->heartbeat_interval, "e.g. 1s, 500ms")
      ->capture_default_str();
  agent
      ->add_option("--max-backoff", flags->max_backoff,
                   "Longest wait between retries while the server is unreachable")
      ->capture_default_str();
  agent
      ->add_option("--keep-finished", flags->keep_finished,
                   "How long finished tasks' logs stay after the server has their exit")
      ->capture_default_str();
  agent->add_option("--label", flags->labels, "KEY=VALUE node label (repeatable)");
  agent
      ->add_option("--feature", flags->features,
                   "node feature jobs may ask for with --constraint, e.g. ib (repeatable, or "
                   "comma-separated: ib,nvlink)")
      ->delimiter(',');
  agent
      ->add_option("--container-runtime", flags->container_runtime,
                   "Runs jobs that name an image: podman, docker or off")
      ->capture_default_str();
  agent->add_option("--container-runtime-path", flags->container_runtime_path,
                    "The runtime's binary (default: podman or docker from PATH)");
  agent->add_option("--container-runtime-arg", flags->container_runtime_args,
                    "An argument for the runtime before its subcommand, e.g. "
                    "--storage-driver=overlay (repeatable)");
  agent
      ->add_option("--container-shm-size", flags->container_shm_size,
                   "Each container's /dev/shm (PyTorch's DataLoader needs more than 64m)")
      ->capture_default_str();
  agent
      ->add_option("--container-pull", flags->container_pull,
                   "When images are pulled unless a job says: missing, never, always")
      ->capture_default_str();
  agent->add_flag("--allow-root-jobs", flags->allow_root_jobs,
                  "Run the tasks of a user whose account is root (refused by default)");
  agent->add_flag("--stop-tasks-on-exit", flags->stop_tasks_on_exit,
                  "Stop every task (SIGTERM, SIGKILL after 5 s) when the agent exits; by "
                  "default tasks keep running and a restarted agent adopts them");
  agent->callback([flags] { RunAgent(*flags); });

  auto task_dir = std::make_shared<std::string>();
  CLI::App* supervise = app.add_subcommand(
      agent::kSuperviseCommand, "Supervise one task (started by the agent, not by hand)");
  supervise->group("");  // hidden from --help
  supervise->add_option("dir", *task_dir, "The task's directory in the state dir")->required();
  supervise->callback([task_dir] { std::exit(agent::RunSupervisor(*task_dir)); });
}

}  // namespace berth::cli
