// berth: the client commands; the daemons and the simulator run from
// berthd beside it (cli/daemon_commands.h, docs/architecture.md).
#include <CLI/CLI.hpp>

#include "cli/client_commands.h"
#include "cli/daemon_commands.h"

int main(int argc, char** argv) {
  berth::cli::ExecDaemonIfAsked(argc, argv);
  CLI::App app{"Berth: a GPU job scheduler for AI-training clusters"};
  app.require_subcommand(1);
  berth::cli::AddDaemonCommands(app);
  berth::cli::AddSubmitCommand(app);
  berth::cli::AddJobCommands(app);
  berth::cli::AddClusterCommands(app);
  berth::cli::AddTokenCommands(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
