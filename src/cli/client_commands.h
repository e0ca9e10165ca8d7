// The user-facing client commands, Slurm-familiar: submit, queue, show,
// why, cancel, release, logs (jobs), nodes, drain, undrain, usage (cluster)
// and token create, list, revoke. Human tables by default, --json
// everywhere, exit codes in api_client.h.
#pragma once

#include <CLI/CLI.hpp>

namespace berth::cli {

void AddSubmitCommand(CLI::App& app);
void AddJobCommands(CLI::App& app);
void AddClusterCommands(CLI::App& app);
void AddTokenCommands(CLI::App& app);

}  // namespace berth::cli
