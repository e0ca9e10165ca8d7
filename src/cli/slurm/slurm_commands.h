// The Slurm commands as names of the berth binary: a link named squeue,
// scancel, sinfo, scontrol, sacct, sbatch or sacctmgr to `berth` runs that command
// (`PATH=build/slurm:$PATH`; docs/from-slurm.md).
#pragma once

#include <optional>

namespace berth::cli::slurm {

// The command's exit code if argv[0]'s basename names a Slurm command it
// implements, else nullopt (berth's own commands run).
std::optional<int> RunIfSlurmCommand(int argc, char** argv);

// Each command: argv[0] is its name.
int Squeue(int argc, char** argv);
int Scancel(int argc, char** argv);
int Sinfo(int argc, char** argv);
int Scontrol(int argc, char** argv);
int Sacct(int argc, char** argv);
int Sbatch(int argc, char** argv);
int Sacctmgr(int argc, char** argv);
int Srun(int argc, char** argv);
int Salloc(int argc, char** argv);

}  // namespace berth::cli::slurm
