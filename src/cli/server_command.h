// `berth server`, `berth dev` and `berth token create`, plus how every
// client command finds the server: flags, then the environment (BERTH_ADDR,
// BERTH_TOKEN), then the dev cluster's data dir in the working directory.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "common/status.h"

namespace berth::cli {

struct ConnectionFlags {
  std::string address;
  std::string token;
};

struct Connection {
  std::string address;  // http://host:port
  std::string token;
};

void AddConnectionFlags(CLI::App& app, ConnectionFlags& flags);
Result<Connection> ResolveConnection(const ConnectionFlags& flags);

void AddServerCommands(CLI::App& app);

}  // namespace berth::cli
