// `berth agent` (run by berthd): the node agent (src/agent/agent.h) as a
// process, and the hidden `berthd supervise-task DIR`, which the agent execs
// for a task's supervisor when berth-supervisor is missing
// (src/agent/supervisor.h).
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
