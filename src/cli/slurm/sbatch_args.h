// sbatch's command line, read into berth submit's options with the same
// meanings as the script's #SBATCH lines (cli/submit_options.h): options
// come before the script's path; sbatch's own --parsable, --wait and
// --wrap are kept apart. The command line wins over the script's #SBATCH lines, as in
// Slurm. Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/slurm/exported_env.h"
#include "cli/submit_options.h"
#include "common/status.h"

namespace berth::cli::slurm {

struct SbatchRequest {
  SubmitOptions options;
  bool parsable = false;              // print "N", not "Submitted batch job N"
  bool wait = false;                  // -W/--wait: exit when the job ends, with its code
  std::optional<std::string> wrap;    // --wrap: the command a /bin/sh script runs
  std::optional<std::string> script;  // its path; none: read from stdin
  std::vector<std::string> script_args;
  std::vector<std::string> warnings;  // options Berth has no meaning for
  std::string submit_host;            // SLURM_SUBMIT_HOST; empty: not set
};

// Whether an option before the first operand (the script or command)
// asks for --help, --usage or -h: sbatch's, srun's and salloc's own usage.
bool AsksForHelp(const std::vector<std::string>& args);

// Whose -W/--wait it reads: sbatch's takes no value (wait for the job);
// srun's and salloc's take seconds.
enum class WaitOption { kSbatch, kSeconds };

// InvalidArgument naming the option for a bad value or a missing one.
Result<SbatchRequest> ParseSbatchArgs(const std::vector<std::string>& args,
                                      WaitOption wait = WaitOption::kSbatch);

// The script --wrap makes: "#!/bin/sh\nCOMMAND\n", as sbatch writes it.
std::string WrapScript(const std::string& command);

// The submission: the script's directives under the command line's
// options. `workdir` is where a job without --chdir runs (sbatch's cwd).
// A job given no name is named as Slurm names it: "wrap" for --wrap, the
// script's file name, or "sbatch" for a script read from stdin. Its
// resources are Slurm's (slurm_allocation.h; `reference_node` the cluster's
// largest node, when known), and its env has SLURM_SUBMIT_DIR (`workdir`)
// and SLURM_SUBMIT_HOST, as sbatch sets them, over what --export takes of
// `inheritable`, the submitting shell's (exported_env.h).
// InvalidArgument if the script does not start with "#!" (Slurm refuses it
// too) or its directives are wrong.
Result<nlohmann::json> SbatchBody(SbatchRequest request, const std::string& script,
                                  const std::string& workdir, const Environment& inheritable,
                                  std::vector<std::string>& warnings,
                                  const std::optional<NodeSize>& reference_node = std::nullopt);

}  // namespace berth::cli::slurm
