#include "server/config.h"

#include <toml++/toml.h>

#include <fstream>
#include <sstream>

#include "common/listen_address.h"
#include "server/queue_config.h"
#include "server/spec_text.h"
#include "server/toml_read.h"

namespace berth::server {
namespace {

using toml_read::Get;
using toml_read::Seconds;
using toml_read::Unknown;

Status ParseScheduler(const toml::table& table, ControllerOptions& options) {
  const std::string path = "scheduler.";
  BERTH_RETURN_IF_ERROR(
      Unknown(table, path,
              {"policy", "heartbeat_timeout_s", "explain_every_s", "queue_depth",
               "starvation_bound_h", "starvation_hard_bound_h", "min_run_before_preemption_s",
               "fair_share_half_life_h", "wait_for_nodes"}));
  BERTH_ASSIGN_OR_RETURN(options.policy, Get<std::string>(table, path, "policy", options.policy));
  // Validated as the controller will build it (Deployment::kLive): an oracle
  // policy is refused here, not at the first cycle.
  if (Result<core::Policy> policy = core::MakePolicy(options.policy, options.policy_config);
      !policy.ok()) {
    return InvalidArgument(path + policy.status().message());
  }
  BERTH_ASSIGN_OR_RETURN(options.heartbeat_timeout,
                         Seconds(table, path, "heartbeat_timeout_s", 1, options.heartbeat_timeout));
  BERTH_ASSIGN_OR_RETURN(options.explain_every,
                         Seconds(table, path, "explain_every_s", 1, options.explain_every));
  BERTH_ASSIGN_OR_RETURN(int64_t depth, Get<int64_t>(table, path, "queue_depth",
                                                     static_cast<int64_t>(options.queue_depth)));
  if (depth < 1) {
    return InvalidArgument(path + "queue_depth: must be at least 1, got " + std::to_string(depth));
  }
  options.queue_depth = static_cast<size_t>(depth);
  BERTH_ASSIGN_OR_RETURN(options.wait_for_nodes,
                         Get<bool>(table, path, "wait_for_nodes", options.wait_for_nodes));
  core::BerthOrderConfig& berth = options.policy_config.berth;
  BERTH_ASSIGN_OR_RETURN(berth.starvation_bound,
                         Seconds(table, path, "starvation_bound_h", 3600, berth.starvation_bound));
  BERTH_ASSIGN_OR_RETURN(berth.starvation_hard_bound,
                         Seconds(table, path, "starvation_hard_bound_h", 3600,
                                 Max(berth.starvation_hard_bound, berth.starvation_bound)));
  if (berth.starvation_hard_bound < berth.starvation_bound) {
    return InvalidArgument(path + "starvation_hard_bound_h: must be at least starvation_bound_h");
  }
  BERTH_ASSIGN_OR_RETURN(options.policy_config.berth_min_run_time,
                         Seconds(table, path, "min_run_before_preemption_s", 1,
                                 options.policy_config.berth_min_run_time));
  BERTH_ASSIGN_OR_RETURN(
      options.cluster.usage_half_life,
      Seconds(table, path, "fair_share_half_life_h", 3600, options.cluster.usage_half_life));
  return Status::Ok();
}

Status ParseDashboard(const toml::table& table, ServerOptions& options) {
  const std::string path = "dashboard.";
  BERTH_RETURN_IF_ERROR(Unknown(table, path, {"history_interval_s", "history_samples"}));
  BERTH_ASSIGN_OR_RETURN(options.history_every,
                         Seconds(table, path, "history_interval_s", 1, options.history_every));
  BERTH_ASSIGN_OR_RETURN(
      int64_t samples,
      Get<int64_t>(table, path, "history_samples", static_cast<int64_t>(options.history_capacity)));
  if (samples < 1 || samples > 1'000'000) {
    return InvalidArgument(path + "history_samples: must be 1..1000000, got " +
                           std::to_string(samples));
  }
  options.history_capacity = static_cast<size_t>(samples);
  return Status::Ok();
}

// A whole number in [min, max] under `key`, or `fallback` without one.
Result<int64_t> Bounded(const toml::table& table, const std::string& path, const char* key,
                        int64_t min, int64_t max, int64_t fallback) {
  BERTH_ASSIGN_OR_RETURN(int64_t value, Get<int64_t>(table, path, key, fallback));
  if (value < min || value > max) {
    return InvalidArgument(path + key + ": must be " + std::to_string(min) + ".." +
                           std::to_string(max) + ", got " + std::to_string(value));
  }
  return value;
}

// [http]: the HTTP layer's limits (http/server.h).
Status ParseHttp(const toml::table& table, http::Limits& limits) {
  const std::string path = "http.";
  BERTH_RETURN_IF_ERROR(
      Unknown(table, path,
              {"max_connections", "max_connections_per_address", "max_header_bytes",
               "header_timeout_s", "idle_timeout_s", "body_timeout_s"}));
  auto count = [&](const char* key, int64_t min, int64_t max, size_t& field) -> Status {
    BERTH_ASSIGN_OR_RETURN(int64_t value,
                           Bounded(table, path, key, min, max, static_cast<int64_t>(field)));
    field = static_cast<size_t>(value);
    return Status::Ok();
  };
  auto seconds = [&](const char* key, std::chrono::milliseconds& field) -> Status {
    BERTH_ASSIGN_OR_RETURN(int64_t value, Bounded(table, path, key, 1, 3600, field.count() / 1000));
    field = std::chrono::seconds(value);
    return Status::Ok();
  };
  BERTH_RETURN_IF_ERROR(count("max_connections", 16, 1'000'000, limits.max_connections));
  BERTH_RETURN_IF_ERROR(
      count("max_connections_per_address", 1, 1'000'000, limits.max_connections_per_address));
  BERTH_RETURN_IF_ERROR(count("max_header_bytes", 1024, 1 << 20, limits.max_header_bytes));
  BERTH_RETURN_IF_ERROR(seconds("header_timeout_s", limits.header_timeout));
  BERTH_RETURN_IF_ERROR(seconds("idle_timeout_s", limits.idle_timeout));
  BERTH_RETURN_IF_ERROR(seconds("body_timeout_s", limits.body_timeout));
  return Status::Ok();
}

}  // namespace

Result<ServerConfig> ParseConfig(std::string_view toml_text, const std::string& source) {
  toml::table root;
  try {
    // toml++ reports syntax errors by exception; it stops here.
    root = toml::parse(toml_text, source);
  } catch (const toml::parse_error& error) {
    std::ostringstream where;
    where << source << ":" << error.source().begin.line << ":" << error.source().begin.column;
    return InvalidArgument(where.str() + ": " + std::string(error.description()));
  }
  BERTH_RETURN_IF_ERROR(
      Unknown(root, "",
              {"listen", "data_dir", "database", "advertise_url", "leader_lease_s", "tls", "http",
               "metrics", "scheduler", "dashboard", "queues", "users", "container_mount_allow"}));
  ServerConfig config;
  ServerOptions& server = config;
  BERTH_ASSIGN_OR_RETURN(server.listen, Get<std::string>(root, "", "listen", server.listen));
  BERTH_ASSIGN_OR_RETURN(server.data_dir, Get<std::string>(root, "", "data_dir", ""));
  BERTH_ASSIGN_OR_RETURN(server.postgres_url, Get<std::string>(root, "", "database", ""));
  BERTH_ASSIGN_OR_RETURN(server.advertise_url, Get<std::string>(root, "", "advertise_url", ""));
  BERTH_ASSIGN_OR_RETURN(
      const core::Duration lease,
      Seconds(root, "", "leader_lease_s", 1, core::Duration::Millis(server.leader_lease.count())));
  server.leader_lease = std::chrono::milliseconds(lease.micros() / 1000);
  BERTH_RETURN_IF_ERROR(ParseListen(server.listen, "listen").status());
  BERTH_ASSIGN_OR_RETURN(server.controller.limits.container_mounts.paths,
                         toml_read::Strings(root, "", "container_mount_allow"));
  for (const std::string& path : server.controller.limits.container_mounts.paths) {
    if (!path.starts_with('/')) {
      return InvalidArgument("container_mount_allow: expected absolute paths, got " +
                             spec_text::Quote(path));
    }
  }
  if (server.data_dir.empty() && server.postgres_url.empty()) {
    return InvalidArgument("data_dir: required unless database names a PostgreSQL server");
  }
  if (const toml::table* tls = root["tls"].as_table()) {
    BERTH_RETURN_IF_ERROR(Unknown(*tls, "tls.", {"cert", "key"}));
    BERTH_ASSIGN_OR_RETURN(server.tls_cert, Get<std::string>(*tls, "tls.", "cert", ""));
    BERTH_ASSIGN_OR_RETURN(server.tls_key, Get<std::string>(*tls, "tls.", "key", ""));
    if (server.tls_cert.empty() != server.tls_key.empty()) {
      return InvalidArgument("tls: set both cert and key, or neither");
    }
  }
  if (const toml::table* http = root["http"].as_table()) {
    BERTH_RETURN_IF_ERROR(ParseHttp(*http, server.http_limits));
  }
  if (const toml::table* metrics = root["metrics"].as_table()) {
    BERTH_RETURN_IF_ERROR(Unknown(*metrics, "metrics.", {"public"}));
    BERTH_ASSIGN_OR_RETURN(server.public_metrics, Get<bool>(*metrics, "metrics.", "public", false));
  }
  if (const toml::table* scheduler = root["scheduler"].as_table()) {
    BERTH_RETURN_IF_ERROR(ParseScheduler(*scheduler, server.controller));
  }
  if (const toml::table* dashboard = root["dashboard"].as_table()) {
    BERTH_RETURN_IF_ERROR(ParseDashboard(*dashboard, server));
  }
  if (const toml::node* queues = root.get("queues")) {
    const toml::array* array = queues->as_array();
    if (array == nullptr) return InvalidArgument("queues: expected [[queues]] tables");
    BERTH_ASSIGN_OR_RETURN(config.queues, ParseQueueArray(*array));
  }
  if (const toml::node* users = root.get("users")) {
    const toml::array* array = users->as_array();
    if (array == nullptr) return InvalidArgument("users: expected [[users]] tables");
    BERTH_ASSIGN_OR_RETURN(server.controller.user_shares, ParseUserArray(*array));
  }
  return config;
}

Result<ServerConfig> LoadConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("--config: cannot open " + path);
  std::stringstream text;
  text << in.rdbuf();
  return ParseConfig(text.str(), path);
}

}  // namespace berth::server
