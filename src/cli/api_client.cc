#include "cli/api_client.h"

#include <httplib.h>
#include <toml++/toml.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "follow/leader_follower.h"

namespace berth::cli {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

std::string ConfigDir() {
  if (std::string xdg = Env("XDG_CONFIG_HOME"); !xdg.empty()) return xdg + "/berth";
  return Env("HOME") + "/.config/berth";
}

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// `server` and `token` / `token_file` from a TOML file; absent keys stay empty.
Status ReadEndpointFile(const std::string& path, Endpoint& out) {
  if (!std::filesystem::exists(path)) return Status::Ok();
  toml::table table;
  try {
    table = toml::parse_file(path);
  } catch (const toml::parse_error& error) {
    return InvalidArgument(path + ": " + std::string(error.description()));
  }
  for (const auto& [key, value] : table) {
    if (key != "server" && key != "token" && key != "token_file") {
      return InvalidArgument(path + ": unknown key '" + std::string(key.str()) +
                             "' (known: server, token, token_file)");
    }
  }
  if (out.servers.empty()) {
    // `server = "http://a:8080,http://b:8080"` or `server = ["http://a:8080", ...]`.
    std::string servers = table["server"].value_or(std::string());
    if (const toml::array* list = table["server"].as_array()) {
      for (const toml::node& item : *list) {
        std::optional<std::string> url = item.value<std::string>();
        if (!url) return InvalidArgument(path + ": server: expected strings (URLs)");
        servers += (servers.empty() ? "" : ",") + *url;
      }
      if (servers.empty()) return InvalidArgument(path + ": server: an empty list");
    }
    if (!servers.empty()) {
      BERTH_ASSIGN_OR_RETURN(out.servers, follow::ParseServerList(servers, path + ": server"));
    }
  }
  if (out.token.empty()) {
    out.token = table["token"].value_or(std::string());
    if (!out.token.empty()) out.token_source = path;
  }
  if (out.token.empty()) {
    if (std::string file = table["token_file"].value_or(std::string()); !file.empty()) {
      out.token = ReadFirstLine(file);
      if (out.token.empty()) return InvalidArgument(path + ": token_file " + file + " is empty");
      out.token_source = file + " (" + path + ")";
    }
  }
  return Status::Ok();
}

// "the server refused the token from --token: invalid token".
std::string Refused(const std::string& what, const std::string& token_source,
                    const std::string& message) {
  return "the server refused " + what +
         (token_source.empty() ? "" : " (the token from " + token_source + ")") + ": " + message;
}

Status FromHttp(const Result<httplib::Response>& result, const std::string& token_source) {
  if (!result.ok()) {
    const std::string& message = result.status().message();
    if (message.rfind("cannot reach", 0) != 0) return result.status();
    return Unavailable(message + "; is it running? (berth dev, or --server / BERTH_ADDR)");
  }
  if (result->status < 400) return Status::Ok();
  nlohmann::json body = nlohmann::json::parse(result->body, nullptr, false);
  std::string message = body.is_object() && body.contains("error")
                            ? body["error"].value("message", result->body)
                            : result->body;
  if (message.empty()) message = "HTTP " + std::to_string(result->status);
  switch (result->status) {
    case 400:
    case 413:
      return InvalidArgument(message);
    case 401:
      return Status(StatusCode::kUnauthenticated, Refused("the token", token_source, message));
    case 403:
      return Status(StatusCode::kPermissionDenied, Refused("this request", token_source, message));
    case 404:
      return NotFound(message);
    case 409:
      return FailedPrecondition(message);
    default:
      // A 503 here is the server's dependency (store, an agent), not the server.
      return Internal(message);
  }
}

void Configure(httplib::Client& client, const std::string& token) {
  client.set_connection_timeout(std::chrono::seconds(5));
  client.set_read_timeout(std::chrono::seconds(30));
  client.set_bearer_token_auth(token);
  client.set_tcp_nodelay(true);  // headers and body go out without waiting for an ACK
}

Result<nlohmann::json> JsonOf(const Result<httplib::Response>& result, const std::string& path,
                              const std::string& token_source) {
  BERTH_RETURN_IF_ERROR(FromHttp(result, token_source));
  nlohmann::json body = nlohmann::json::parse(result->body, nullptr, false);
  if (body.is_discarded()) return Internal("the server answered " + path + " with invalid JSON");
  return body;
}

}  // namespace

void AddClientFlags(CLI::App& app, ClientFlags& flags) {
  app.add_option("--server", flags.server,
                 "Server URL, or several separated by commas (a leader and its standbys) "
                 "(else $BERTH_ADDR, else the config file, else the dev cluster)");
  app.add_option("--token", flags.token, "API token (else $BERTH_TOKEN, else the config file)");
  app.add_flag("--json", flags.json, "Print JSON instead of a table");
}

std::string ClientConfigPath() {
  if (std::string path = Env("BERTH_CONFIG"); !path.empty()) return path;
  return ConfigDir() + "/config.toml";
}

std::string DevClusterPath() { return ConfigDir() + "/dev.toml"; }

Status WriteDevCluster(const std::string& url, const std::string& token_file) {
  std::error_code error;
  std::filesystem::create_directories(ConfigDir(), error);
  if (error) return Unavailable("cannot create " + ConfigDir() + ": " + error.message());
  const std::string path = DevClusterPath();
  std::ofstream out(path, std::ios::trunc);
  out << "# Written by `berth dev`: the CLI uses it when nothing else names a server.\n"
      << "server = \"" << url << "\"\n"
      << "token_file = \"" << std::filesystem::absolute(token_file).string() << "\"\n";
  if (!out) return Unavailable("cannot write " + path);
  return Status::Ok();
}

Result<Endpoint> ResolveEndpoint(const ClientFlags& flags) {
  Endpoint endpoint{{}, flags.token, flags.token.empty() ? "" : "--token"};
  if (!flags.server.empty()) {
    BERTH_ASSIGN_OR_RETURN(endpoint.servers, follow::ParseServerList(flags.server, "--server"));
  } else if (std::string env = Env("BERTH_ADDR"); !env.empty()) {
    BERTH_ASSIGN_OR_RETURN(endpoint.servers, follow::ParseServerList(env, "BERTH_ADDR"));
  }
  if (endpoint.token.empty()) {
    endpoint.token = Env("BERTH_TOKEN");
    if (!endpoint.token.empty()) endpoint.token_source = "BERTH_TOKEN";
  }
  BERTH_RETURN_IF_ERROR(ReadEndpointFile(ClientConfigPath(), endpoint));
  // The dev cluster's token goes only to its own server; its server takes
  // a token from anywhere (a wrong one is then refused there, and said so,
  // instead of sent to a default address where nothing listens).
  if (endpoint.servers.empty()) {
    Endpoint dev;
    BERTH_RETURN_IF_ERROR(ReadEndpointFile(DevClusterPath(), dev));
    endpoint.servers = dev.servers;
    if (endpoint.token.empty() && !dev.servers.empty()) {
      endpoint.token = dev.token;
      endpoint.token_source = dev.token_source;
    }
  }
  if (endpoint.servers.empty()) endpoint.servers = {"http://127.0.0.1:8080"};
  if (endpoint.token.empty()) {
    endpoint.token = ReadFirstLine(".berth-dev/admin-token");
    if (!endpoint.token.empty()) endpoint.token_source = ".berth-dev/admin-token";
  }
  if (endpoint.token.empty()) {
    return InvalidArgument("--token: no token (use --token, BERTH_TOKEN, a config file at " +
                           ClientConfigPath() + ", or start `berth dev`)");
  }
  return endpoint;
}

ApiClient::ApiClient(Endpoint endpoint) : endpoint_(std::move(endpoint)) {
  follow::FollowOptions options;
  options.configure = [token = endpoint_.token](httplib::Client& client) {
    Configure(client, token);
  };
  follower_ = std::make_shared<follow::LeaderFollower>(endpoint_.servers, std::move(options));
}

Result<ApiClient> ApiClient::FromFlags(const ClientFlags& flags) {
  BERTH_ASSIGN_OR_RETURN(Endpoint endpoint, ResolveEndpoint(flags));
  return ApiClient(std::move(endpoint));
}

Result<nlohmann::json> ApiClient::Get(const std::string& path) const {
  return JsonOf(
      follower_->Request([&](httplib::Client& c) { return c.Get(path); }, follow::Replay::kSafe),
      path, endpoint_.token_source);
}

Result<nlohmann::json> ApiClient::Post(const std::string& path, const nlohmann::json& body,
                                       follow::Replay replay) const {
  const std::string text = body.dump();
  return JsonOf(
      follower_->Request([&](httplib::Client& c) { return c.Post(path, text, "application/json"); },
                         replay),
      path, endpoint_.token_source);
}

Result<nlohmann::json> ApiClient::Patch(const std::string& path, const nlohmann::json& body) const {
  const std::string text = body.dump();
  return JsonOf(follower_->Request(
                    [&](httplib::Client& c) { return c.Patch(path, text, "application/json"); },
                    follow::Replay::kSafe),
                path, endpoint_.token_source);
}

Result<nlohmann::json> ApiClient::Delete(const std::string& path) const {
  return JsonOf(
      follower_->Request([&](httplib::Client& c) { return c.Delete(path); }, follow::Replay::kSafe),
      path, endpoint_.token_source);
}

Result<RawReply> ApiClient::GetRaw(const std::string& path) const {
  Result<httplib::Response> result =
      follower_->Request([&](httplib::Client& c) { return c.Get(path); }, follow::Replay::kSafe);
  BERTH_RETURN_IF_ERROR(FromHttp(result, endpoint_.token_source));
  RawReply reply{result->body, {}};
  for (const auto& [key, value] : result->headers) reply.headers[key] = value;
  return reply;
}

bool EndedState(const std::string& state) {
  return state == "succeeded" || state == "failed" || state == "cancelled" || state == "timeout";
}

ApiClient ConnectOrExit(const std::string& command, const ClientFlags& flags) {
  Result<ApiClient> client = ApiClient::FromFlags(flags);
  if (!client.ok()) Exit(command, client.status());
  return std::move(*client);
}

void Exit(const std::string& command, const Status& status) {
  std::fprintf(stderr, "berth %s: %s\n", command.c_str(), status.message().c_str());
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
      std::exit(kExitUsage);
    case StatusCode::kUnavailable:
      std::exit(kExitUnreachable);
    default:
      std::exit(kExitRefused);
  }
}

}  // namespace berth::cli
