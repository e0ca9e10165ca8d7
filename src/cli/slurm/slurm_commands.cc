#include "cli/slurm/slurm_commands.h"

#include <csignal>
#include <cstring>
#include <string>

namespace berth::cli::slurm {

std::optional<int> RunIfSlurmCommand(int argc, char** argv) {
  if (argc < 1 || argv[0] == nullptr) return std::nullopt;
  const char* slash = std::strrchr(argv[0], '/');
  const std::string name = slash == nullptr ? argv[0] : slash + 1;
  int (*run)(int, char**) = nullptr;
  if (name == "squeue") run = Squeue;
  if (name == "scancel") run = Scancel;
  if (name == "sinfo") run = Sinfo;
  if (name == "scontrol") run = Scontrol;
  if (name == "sacct") run = Sacct;
  if (name == "sbatch") run = Sbatch;
  if (name == "sacctmgr") run = Sacctmgr;
  if (name == "srun") run = Srun;
  if (name == "salloc") run = Salloc;
  if (run == nullptr) return std::nullopt;
  // Messages name the command as Slurm's do ("squeue: error: ..."),
  // getopt's included, whatever path it was run by.
  argv[0] = const_cast<char*>(slash == nullptr ? argv[0] : slash + 1);
  // As berth: a server that closes early must not kill the command.
  std::signal(SIGPIPE, SIG_IGN);
  return run(argc, argv);
}

}  // namespace berth::cli::slurm
