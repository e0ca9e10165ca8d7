// berthd: the server, the local dev cluster, the node agent and the
// simulator, which `berth` execs for those commands
// (cli/daemon_commands.h). Run directly it takes the same arguments.
#include <CLI/CLI.hpp>

#include "cli/agent_command.h"
#include "cli/command_line.h"
#include "cli/server_command.h"
#include "cli/sim_command.h"

int main(int argc, char** argv) {
  CLI::App app{"Berth's daemons and simulator (berth runs them: berth server, dev, agent, sim)"};
  app.require_subcommand(1);
  berth::cli::AddServerCommands(app);
  berth::cli::AddAgentCommands(app);
  berth::cli::AddSimCommand(app);
  berth::cli::OneValuePerOccurrence(app);
  return berth::cli::ParseCommandLine(app, argc, argv);
}
