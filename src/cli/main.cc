// berth: one binary, several roles (see docs/architecture.md).
#include <CLI/CLI.hpp>

#include "cli/agent_command.h"
#include "cli/client_commands.h"
#include "cli/server_command.h"
#include "cli/sim_command.h"

int main(int argc, char** argv) {
  CLI::App app{"Berth: a GPU job scheduler for AI-training clusters"};
  app.require_subcommand(1);
  berth::cli::AddServerCommands(app);
  berth::cli::AddAgentCommands(app);
  berth::cli::AddSimCommand(app);
  berth::cli::AddSubmitCommand(app);
  berth::cli::AddJobCommands(app);
  berth::cli::AddClusterCommands(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
