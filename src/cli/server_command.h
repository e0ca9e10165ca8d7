// `berth server` and `berth dev` (run by berthd: cli/daemon_commands.h).
#pragma once

#include <CLI/CLI.hpp>

namespace berth::cli {

void AddServerCommands(CLI::App& app);

}  // namespace berth::cli
