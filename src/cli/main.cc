// berth: the client commands; the daemons and the simulator run from
// berthd beside it (cli/daemon_commands.h, docs/architecture.md).
#include <CLI/CLI.hpp>
#include <csignal>

#include "cli/client_commands.h"
#include "cli/command_line.h"
#include "cli/daemon_commands.h"
#include "cli/slurm/slurm_commands.h"

int main(int argc, char** argv) {
  // Run as a Slurm command when a link so named ran it (cli/slurm/).
  if (std::optional<int> code = berth::cli::slurm::RunIfSlurmCommand(argc, argv)) return *code;
  berth::cli::ExecDaemonIfAsked(argc, argv);
  // A server that refuses a request before reading all of its body (413,
  // 401) closes the connection: the client's write must fail with an
  // error it reports, not kill the process. (After the exec above: the
  // daemons' tasks must not inherit an ignored SIGPIPE.)
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"Berth: a GPU job scheduler for AI-training clusters"};
  app.require_subcommand(1);
  berth::cli::AddDaemonCommands(app);
  berth::cli::AddSubmitCommand(app);
  berth::cli::AddJobCommands(app);
  berth::cli::AddClusterCommands(app);
  berth::cli::AddTokenCommands(app);
  berth::cli::OneValuePerOccurrence(app);
  return berth::cli::ParseCommandLine(app, argc, argv);
}
