// How client commands talk to the server: where it is and which token to
// use (flags, then BERTH_ADDR / BERTH_TOKEN, then a config file, then the
// dev cluster `berth dev` announced), and JSON over HTTP with the server's
// error messages turned back into Status. Where several servers are named
// (a leader and its standbys, issue 32), requests follow the leader
// (follow/leader_follower.h).
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "follow/replay.h"

namespace berth::follow {
class LeaderFollower;
}

namespace berth::cli {

struct ClientFlags {
  std::string server;
  std::string token;
  bool json = false;  // print the server's JSON instead of tables
};

// --server, --token and --json on a client command.
void AddClientFlags(CLI::App& app, ClientFlags& flags);

struct Endpoint {
  std::vector<std::string> servers;  // http(s)://host:port, one or several
  std::string token;
  // Where the token came from ("--token", "BERTH_TOKEN", a file), so that
  // a refused token is reported as that, naming it.
  std::string token_source;
};

// Where the CLI looks for its config file: $BERTH_CONFIG, else
// $XDG_CONFIG_HOME/berth/config.toml, else ~/.config/berth/config.toml.
std::string ClientConfigPath();
// Where `berth dev` announces itself: ~/.config/berth/dev.toml (same rules).
std::string DevClusterPath();
// Written by `berth dev` at start: its URL and the admin token's file.
Status WriteDevCluster(const std::string& url, const std::string& token_file);

// Resolves the server and token: flags, environment, config file
// (`server = "..."`, `token = "..."` or `token_file = "..."`), the dev
// cluster file, then http://127.0.0.1:8080 with .berth-dev/admin-token.
// A token given without a server goes to the dev cluster's server when one
// is announced (never the dev cluster's token to another server).
// `--server`, BERTH_ADDR and `server` may name several servers, separated
// by commas (the config file's `server` may also be an array of strings).
Result<Endpoint> ResolveEndpoint(const ClientFlags& flags);

struct RawReply {
  std::string body;
  std::map<std::string, std::string> headers;
};

// Requests follow the leader among the endpoint's servers, for up to 15 s
// each; copies share where the last answer came from. Not thread-safe.
class ApiClient {
 public:
  // REQUIRES: endpoint.servers is not empty.
  explicit ApiClient(Endpoint endpoint);
  static Result<ApiClient> FromFlags(const ClientFlags& flags);

  Result<nlohmann::json> Get(const std::string& path) const;
  // A POST is sent again after a connection lost with the request on its
  // way only when `replay` says it is safe (a submit with its idempotency
  // key, cancel, drain).
  Result<nlohmann::json> Post(const std::string& path,
                              const nlohmann::json& body = nlohmann::json::object(),
                              follow::Replay replay = follow::Replay::kUnsafe) const;
  // Setting fields to values: safe to resend.
  Result<nlohmann::json> Patch(const std::string& path, const nlohmann::json& body) const;
  // Revoking twice revokes once: safe to resend.
  Result<nlohmann::json> Delete(const std::string& path) const;
  // For logs: the raw body and the headers the server sent.
  Result<RawReply> GetRaw(const std::string& path) const;

  const Endpoint& endpoint() const { return endpoint_; }

 private:
  Endpoint endpoint_;
  std::shared_ptr<follow::LeaderFollower> follower_;
};

// Whether a job in this API state has ended (it will not run again).
bool EndedState(const std::string& state);

// Exit codes every client command uses (docs/cli.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitRefused = 1;      // the server said no (4xx) or failed (5xx)
inline constexpr int kExitUsage = 2;        // a bad flag or value
inline constexpr int kExitUnreachable = 3;  // no server at the address

// Prints "berth COMMAND: message" on stderr and exits with the code that
// matches the status (InvalidArgument -> usage, Unavailable -> unreachable).
[[noreturn]] void Exit(const std::string& command, const Status& status);

// ApiClient::FromFlags, or Exit.
ApiClient ConnectOrExit(const std::string& command, const ClientFlags& flags);

}  // namespace berth::cli
