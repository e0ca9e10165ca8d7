#include "cli/server_command.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "agent/fake_gpus.h"
#include "cli/agent_command.h"
#include "cli/api_client.h"
#include "cli/command_line.h"
#include "cli/daemon_commands.h"
#include "cli/dev_agents.h"
#include "common/clock.h"
#include "common/unix_account.h"
#include "server/config.h"
#include "server/server.h"

namespace berth::cli {
namespace {

// Runs the server until SIGINT or SIGTERM, then stops it cleanly. With
// `agents` (berth dev --nodes N), starts them once the server listens, and
// stops them (by PID) before the server.
int RunUntilSignalled(server::ServerOptions options, const std::string& command,
                      std::optional<DevAgentsOptions> agents = std::nullopt) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGCHLD);  // an agent exited
  // Block them in every thread the server starts; one thread waits for them.
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  static const SystemClock clock;
  const std::string data_dir = options.data_dir;
  // While it waits at start (for PostgreSQL, for the lease), a stop signal
  // ends the wait.
  options.keep_waiting = [] {
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    const timespec now{};
    return sigtimedwait(&stop, nullptr, &now) < 0;
  };
  Result<std::unique_ptr<server::Server>> started =
      server::Server::Start(std::move(options), clock);
  if (!started.ok()) FailCommand(command, started.status().message());
  server::Server& server = **started;
  std::fprintf(stderr, "berth %s: listening on %s\n", command.c_str(), server.url().c_str());
  if (!server.admin_token_path().empty()) {
    std::fprintf(stderr, "berth %s: admin token written to %s\n", command.c_str(),
                 server.admin_token_path().c_str());
  }
  if (command == "dev") {
    // So that client commands run anywhere reach this cluster without flags.
    const std::string token_file = data_dir + "/admin-token";
    if (Status written = WriteDevCluster(server.url(), token_file); !written.ok()) {
      std::fprintf(stderr, "berth dev: %s (client commands need --server/--token)\n",
                   written.message().c_str());
    } else {
      std::fprintf(stderr, "berth dev: client commands find it through %s\n",
                   DevClusterPath().c_str());
    }
    // From the file: admin_token_path() is empty when the data dir existed.
    std::ifstream token_in(token_file);
    std::string token;
    std::getline(token_in, token);
    std::fprintf(stderr, "berth dev: dashboard: %s/#token=%s\n", server.url().c_str(),
                 token.c_str());
  }
  std::unique_ptr<DevAgents> dev_agents;
  if (agents && agents->nodes > 0) {
    agents->server_url = server.url();
    agents->data_dir = data_dir;
    Result<std::unique_ptr<DevAgents>> spawned = DevAgents::Start(*agents);
    if (!spawned.ok()) {
      server.Stop();
      FailCommand(command, spawned.status().message());
    }
    dev_agents = std::move(*spawned);
  }
  int signal_number = 0;
  while (true) {
    sigwait(&signals, &signal_number);
    if (signal_number != SIGCHLD) break;
    if (dev_agents) dev_agents->Reap();
  }
  std::fprintf(stderr, "berth %s: stopping (signal %d)\n", command.c_str(), signal_number);
  if (dev_agents) dev_agents->Stop();
  server.Stop();
  return 0;
}

struct DevFlags {
  std::string data_dir = ".berth-dev";
  std::string listen = "127.0.0.1:8080";
  int nodes = 1;
  std::string fake_gpus = "8xH100-80GB";
  int fake_topology = 1;
  std::string agent_heartbeat_interval = "1s";
  std::vector<std::string> features;
  std::vector<std::string> container_mount_allow;
  std::string heartbeat_timeout;
  std::string min_run_before_preemption;
  bool keep_tasks = false;
};

}  // namespace

void AddServerCommands(CLI::App& app) {
  auto config_path = std::make_shared<std::string>();
  CLI::App* server_app = app.add_subcommand("server", DaemonDescription("server"));
  server_app->add_option("--config", *config_path, "TOML configuration file")->required();
  server_app->callback([config_path] {
    Result<server::ServerConfig> config = server::LoadConfig(*config_path);
    if (!config.ok()) FailCommand("server", config.status().message());
    std::exit(RunUntilSignalled(std::move(*config), "server"));
  });

  auto dev = std::make_shared<DevFlags>();
  CLI::App* dev_app = app.add_subcommand("dev", DaemonDescription("dev"));
  dev_app->add_option("--data-dir", dev->data_dir, "State and the admin token live here")
      ->capture_default_str();
  dev_app->add_option("--listen", dev->listen, "Address to serve on (loopback)")
      ->capture_default_str();
  dev_app->add_option("--nodes", dev->nodes, "Simulated GPU nodes: one agent each (0: none)")
      ->capture_default_str();
  dev_app->add_option("--fake-gpus", dev->fake_gpus, "GPUs per node, e.g. 8xH100-80GB")
      ->capture_default_str();
  dev_app
      ->add_option("--fake-topology", dev->fake_topology,
                   "Interconnect groups among each node's GPUs")
      ->capture_default_str();
  dev_app
      ->add_option("--agent-heartbeat-interval", dev->agent_heartbeat_interval,
                   "How often the agents report, e.g. 1s, 200ms")
      ->capture_default_str();
  dev_app
      ->add_option("--feature", dev->features,
                   "A node feature for --constraint: ib on every node, ib@node-2 on one "
                   "(repeatable, or comma-separated)")
      ->delimiter(',');
  dev_app
      ->add_option("--container-mount-allow", dev->container_mount_allow,
                   "A host path (and what is under it) jobs' containers may mount, as the "
                   "server's container_mount_allow (repeatable, or comma-separated; none by "
                   "default)")
      ->delimiter(',');
  dev_app->add_option("--heartbeat-timeout", dev->heartbeat_timeout,
                      "A silent node is down after this long, e.g. 30s (the default)");
  dev_app->add_option("--min-run-before-preemption", dev->min_run_before_preemption,
                      "A job runs this long before it may be preempted, e.g. 10m (the default)");
  dev_app->add_flag("--keep-tasks", dev->keep_tasks,
                    "Leave tasks running when berth dev stops (the next one adopts them)");
  dev_app->callback([dev] {
    if (dev->nodes < 0 || dev->nodes > 64) {
      FailCommand("dev", "--nodes: must be 0..64, got " + std::to_string(dev->nodes));
    }
    if (dev->nodes > 0) {
      if (Result<agent::FakeGpuSpec> gpus =
              agent::ParseFakeGpus(dev->fake_gpus, dev->fake_topology);
          !gpus.ok()) {
        FailCommand("dev", gpus.status().message());
      }
      if (Result<std::chrono::milliseconds> interval =
              ParseDurationFlag(dev->agent_heartbeat_interval, "--agent-heartbeat-interval");
          !interval.ok()) {
        FailCommand("dev", interval.status().message());
      }
    }
    server::ServerOptions options;
    options.data_dir = dev->data_dir;
    // A newcomer's jobs run as themselves (as root only when they are root).
    options.admin_user = EffectiveUserName();
    options.listen = dev->listen;
    using std::filesystem::perms;
    options.data_dir_mode = perms::owner_all | perms::group_exec | perms::others_exec;
    const auto seconds = [](const std::string& text, const std::string& flag) {
      Result<std::chrono::milliseconds> parsed = ParseDurationFlag(text, flag);
      if (!parsed.ok() || parsed->count() == 0) {
        FailCommand("dev", parsed.ok() ? flag + ": must be positive, got '" + text + "'"
                                       : parsed.status().message());
      }
      return core::Duration::Millis(parsed->count());
    };
    if (!dev->heartbeat_timeout.empty()) {
      options.controller.heartbeat_timeout = seconds(dev->heartbeat_timeout, "--heartbeat-timeout");
    }
    for (const std::string& path : dev->container_mount_allow) {
      if (!path.starts_with('/')) {
        FailCommand("dev",
                    "--container-mount-allow: expected an absolute path, got '" + path + "'");
      }
    }
    options.controller.limits.container_mounts.paths = dev->container_mount_allow;
    if (!dev->min_run_before_preemption.empty()) {
      options.controller.policy_config.berth_min_run_time =
          seconds(dev->min_run_before_preemption, "--min-run-before-preemption");
    }
    DevAgentsOptions agents;
    agents.nodes = dev->nodes;
    agents.fake_gpus = dev->fake_gpus;
    agents.fake_topology = dev->fake_topology;
    agents.heartbeat_interval = dev->agent_heartbeat_interval;
    agents.stop_tasks_on_exit = !dev->keep_tasks;
    agents.allow_root_jobs = ::geteuid() == 0;
    for (const std::string& text : dev->features) {
      Result<DevFeature> feature = ParseDevFeature(text, dev->nodes);
      if (!feature.ok()) FailCommand("dev", feature.status().message());
      agents.features.push_back(std::move(*feature));
    }
    std::exit(RunUntilSignalled(std::move(options), "dev", agents));
  });
}

}  // namespace berth::cli
