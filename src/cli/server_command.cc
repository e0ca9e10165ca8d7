#include "cli/server_command.h"

#include <httplib.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/clock.h"
#include "server/config.h"
#include "server/server.h"

namespace berth::cli {
namespace {

[[noreturn]] void Fail(const std::string& command, const std::string& message) {
  std::fprintf(stderr, "berth %s: %s\n", command.c_str(), message.c_str());
  std::exit(2);
}

// Runs the server until SIGINT or SIGTERM, then stops it cleanly.
int RunUntilSignalled(server::ServerOptions options, const std::string& command) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  // Block them in every thread the server starts; one thread waits for them.
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  static const SystemClock clock;
  Result<std::unique_ptr<server::Server>> started =
      server::Server::Start(std::move(options), clock);
  if (!started.ok()) Fail(command, started.status().message());
  server::Server& server = **started;
  std::fprintf(stderr, "berth %s: listening on %s\n", command.c_str(), server.url().c_str());
  if (!server.admin_token_path().empty()) {
    std::fprintf(stderr, "berth %s: admin token written to %s\n", command.c_str(),
                 server.admin_token_path().c_str());
  }
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  std::fprintf(stderr, "berth %s: stopping (signal %d)\n", command.c_str(), signal_number);
  server.Stop();
  return 0;
}

struct DevFlags {
  std::string data_dir = ".berth-dev";
  std::string listen = "127.0.0.1:8080";
  int nodes = 0;
  std::string fake_gpus = "8xH100-80GB";
};

struct TokenFlags {
  std::string user;
  std::string role = "user";
  std::string node;
  ConnectionFlags connection;
};

}  // namespace

void AddConnectionFlags(CLI::App& app, ConnectionFlags& flags) {
  app.add_option("--server", flags.address, "Server URL (else $BERTH_ADDR, else dev default)");
  app.add_option("--token", flags.token,
                 "API token (else $BERTH_TOKEN, else the dev cluster's admin token)");
}

Result<Connection> ResolveConnection(const ConnectionFlags& flags) {
  Connection connection;
  connection.address = flags.address;
  if (connection.address.empty()) {
    if (const char* env = std::getenv("BERTH_ADDR")) connection.address = env;
  }
  if (connection.address.empty()) connection.address = "http://127.0.0.1:8080";
  connection.token = flags.token;
  if (connection.token.empty()) {
    if (const char* env = std::getenv("BERTH_TOKEN")) connection.token = env;
  }
  if (connection.token.empty()) {
    std::ifstream in(".berth-dev/admin-token");
    std::getline(in, connection.token);
  }
  if (connection.token.empty()) {
    return InvalidArgument("--token: no token (set --token, BERTH_TOKEN, or run berth dev here)");
  }
  return connection;
}

void AddServerCommands(CLI::App& app) {
  auto config_path = std::make_shared<std::string>();
  CLI::App* server_app = app.add_subcommand("server", "Run the control plane (API, scheduler)");
  server_app->add_option("--config", *config_path, "TOML configuration file")->required();
  server_app->callback([config_path] {
    Result<server::ServerConfig> config = server::LoadConfig(*config_path);
    if (!config.ok()) Fail("server", config.status().message());
    std::exit(RunUntilSignalled(std::move(*config), "server"));
  });

  auto dev = std::make_shared<DevFlags>();
  CLI::App* dev_app = app.add_subcommand(
      "dev", "Run a local cluster: server with SQLite in a data dir (agents come later)");
  dev_app->add_option("--data-dir", dev->data_dir, "State and the admin token live here")
      ->capture_default_str();
  dev_app->add_option("--listen", dev->listen, "Address to serve on (loopback)")
      ->capture_default_str();
  dev_app->add_option("--nodes", dev->nodes, "Simulated GPU nodes (needs the agent)")
      ->capture_default_str();
  dev_app->add_option("--fake-gpus", dev->fake_gpus, "GPUs per node, e.g. 8xH100-80GB")
      ->capture_default_str();
  dev_app->callback([dev] {
    if (dev->nodes != 0) {
      Fail("dev", "--nodes: simulated nodes need the node agent, which is not built yet; use 0");
    }
    server::ServerOptions options;
    options.data_dir = dev->data_dir;
    options.listen = dev->listen;
    std::exit(RunUntilSignalled(std::move(options), "dev"));
  });

  auto token = std::make_shared<TokenFlags>();
  CLI::App* token_app = app.add_subcommand("token", "Manage API tokens");
  token_app->require_subcommand(1);
  CLI::App* create = token_app->add_subcommand("create", "Issue a token (admins)");
  create->add_option("--user", token->user, "Who the token speaks for")->required();
  create->add_option("--role", token->role, "admin, user or agent")->capture_default_str();
  create->add_option("--node", token->node, "With --role agent: the node it belongs to");
  AddConnectionFlags(*create, token->connection);
  create->callback([token] {
    Result<Connection> connection = ResolveConnection(token->connection);
    if (!connection.ok()) Fail("token create", connection.status().message());
    httplib::Client client(connection->address);
    client.set_bearer_token_auth(connection->token);
    nlohmann::json body{{"user", token->user}, {"role", token->role}};
    if (!token->node.empty()) body["node"] = token->node;
    httplib::Result response = client.Post("/api/v1/tokens", body.dump(), "application/json");
    if (!response) {
      Fail("token create",
           "cannot reach " + connection->address + ": " + httplib::to_string(response.error()));
    }
    nlohmann::json reply = nlohmann::json::parse(response->body, nullptr, false);
    if (response->status != 201) {
      const std::string message = reply.is_object() && reply.contains("error")
                                      ? reply["error"].value("message", response->body)
                                      : response->body;
      Fail("token create", message);
    }
    std::printf("%s\n", reply.value("token", "").c_str());
    std::exit(0);
  });
}

}  // namespace berth::cli
