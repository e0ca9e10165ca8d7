// `berth agent`: the node agent (src/agent/agent.h) as a process, and the
// hidden `berth supervise-task DIR` that the agent execs for each task's
// supervisor (src/agent/supervisor.h).
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <string>

#include "common/status.h"

namespace berth::cli {

void AddAgentCommands(CLI::App& app);

// "500ms", "2s", "5m", "24h", or a plain number of seconds. InvalidArgument
// names `flag` and the value.
Result<std::chrono::milliseconds> ParseDurationFlag(const std::string& text,
                                                    const std::string& flag);

}  // namespace berth::cli
