// The server's TOML configuration (deploy/berth.toml documents every key).
//
//   listen = "127.0.0.1:8080"
//   data_dir = "/var/lib/berth"          # SQLite store and admin token
//   database = ""                        # a PostgreSQL URL: use it instead of SQLite
//   container_mount_allow = ["/data"]    # host paths jobs' containers may mount
//
//   [tls]
//   cert = ""                            # both set: HTTPS
//   key = ""
//
//   [scheduler]
//   policy = "berth"
//   heartbeat_timeout_s = 30
//   explain_every_s = 10
//   queue_depth = 1000
//   starvation_bound_h = 36
//   min_run_before_preemption_s = 600
//   fair_share_half_life_h = 168
//
//   [dashboard]
//   history_interval_s = 5               # one sample for the charts this often
//   history_samples = 17280              # kept in memory (24 h at 5 s)
//
//   [[queues]]                           # team queues (optional)
//   name = "vision"
//   parent = ""
//   guaranteed_gpus = 64
//   ceiling_gpus = 128                   # optional
//   ...                                  # shares, limits, rules: queue_config.h
//
//   [[users]]                            # fair-share shares (optional)
//   name = "alice"
//   shares = 2
//
// Unknown keys are errors, named with their path, so a typo never silently
// leaves a default in place.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "server/server.h"

namespace berth::server {

using ServerConfig = ServerOptions;

Result<ServerConfig> ParseConfig(std::string_view toml_text, const std::string& source);
Result<ServerConfig> LoadConfig(const std::string& path);

}  // namespace berth::server
