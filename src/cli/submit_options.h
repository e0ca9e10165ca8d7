// What `berth submit` was asked for, from three sources in decreasing
// precedence: the command line, `#BERTH` directive lines in the script, and
// `#SBATCH` lines (the Slurm options that have a Berth meaning). Pure: text
// in, a JSON submission body out; the command in submit_command.cc does the
// I/O.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/slurm/slurm_allocation.h"
#include "common/status.h"

namespace berth::cli {

struct SubmitOptions {
  std::optional<int64_t> gpus;  // per task
  std::optional<int64_t> tasks;
  std::optional<int64_t> nodes;  // berth submit --nodes: one task on each of N distinct nodes
  // Slurm's resource options (#SBATCH lines, sbatch's command line), read
  // with Slurm's per-job, per-node and per-task meanings
  // (slurm/slurm_allocation.h). Used only when none of Berth's own
  // resource flags (gpus, tasks, nodes, cpus, mem) is given: those win
  // over them as a whole.
  std::optional<slurm::SlurmResourceOptions> slurm;
  std::optional<std::string> gpu_type;    // a model, or several as "A100-80GB|H100-80GB"
  std::optional<std::string> constraint;  // node features: "a100&ib", "!spot" (core/constraint.h)
  std::optional<std::string> nodelist;    // a Slurm hostlist: only these nodes
  std::optional<std::string> exclude;     // a Slurm hostlist: never these nodes
  std::optional<double> cpus;             // per task
  std::optional<std::string> mem;         // per task
  std::optional<std::string> time;        // time limit, Slurm formats
  std::optional<std::string> estimate;
  std::optional<std::string> name;
  std::optional<std::string> priority;  // integer or low/normal/high
  std::optional<std::string> queue;
  std::optional<bool> preemptible;
  std::optional<std::string> grace;
  std::optional<std::string> signal;  // --signal=[B:]SIG[@secs] (signal_option.h)
  // sbatch's --export: which of the submitting environment the job carries
  // (slurm/exported_env.h); none: ALL.
  std::optional<std::string> export_env;
  std::vector<std::string> after;  // ID or ID:KIND or KIND:ID
  std::optional<std::string> array;
  std::vector<std::string> env;  // K=V
  std::optional<std::string> workdir;
  std::optional<std::string> output;     // stdout file, Slurm's %-patterns
  std::optional<std::string> error;      // stderr file
  std::optional<std::string> open_mode;  // append | truncate
  std::optional<int64_t> retries;
  std::optional<bool> requeue;
  std::optional<bool> hold;
  std::optional<bool> wait_for_nodes;     // accept it though no registered node could host it
  std::optional<bool> gpus_in_one_group;  // each task's GPUs in one interconnect group
  // The container, with the names Slurm's Pyxis plugin made familiar.
  std::optional<std::string> container_image;
  std::optional<std::string> container_mounts;  // SRC:DST[:ro|:rw],...
  std::optional<std::string> container_workdir;
  std::optional<bool> container_mount_home;
  std::optional<std::string> container_pull;  // missing | never | always

  // Fills every field this one lacks from `lower` (lists: when empty).
  void FillFrom(const SubmitOptions& lower);
};

// A duration as Slurm writes --time: "MM", "MM:SS", "HH:MM:SS", "D-HH",
// "D-HH:MM", "D-HH:MM:SS" (a bare number is minutes), or with a unit:
// "90s", "30m", "2h", "1d". Returns seconds > 0; the message names `flag`.
Result<int64_t> ParseDuration(std::string_view text, std::string_view flag);

// Memory as "512M", "16G", "1T" or plain MiB ("2048"); returns MiB.
Result<int64_t> ParseMemoryMiB(std::string_view text, std::string_view flag);

// The directive lines of a script: `#BERTH` and `#SBATCH` lines before the
// first line that is neither blank nor a comment (as sbatch reads them).
// `#BERTH` lines take berth submit's own flags; unknown ones are errors.
// Any `#SBATCH` line makes `sbatch.slurm` set: the script is a Slurm job.
// `#SBATCH` options without a Berth meaning are skipped with a warning.
struct ScriptDirectives {
  SubmitOptions berth;
  SubmitOptions sbatch;
  std::vector<std::string> warnings;
};
Result<ScriptDirectives> ParseScriptDirectives(std::string_view script);

// One `--flag value` / `--flag=value` / `-X value` pair applied to
// `options`, as a #BERTH line or the matching #SBATCH option spells it.
// `sbatch` selects Slurm's spellings. Returns false (and no error) for a
// flag that has no meaning here, so callers decide whether that is fatal.
Result<bool> ApplyDirective(std::string_view flag, std::optional<std::string_view> value,
                            bool sbatch, SubmitOptions& options);

// The JSON body of POST /api/v1/jobs. Exactly one of `command` (argv) and
// `script` (text) is non-empty. Values the server would refuse for their
// form alone (a duration, memory, a constraint expression, an empty
// hostlist or GPU model) are errors naming the flag; hostlists pass through
// unexpanded, and whether any node could host the job is the server's call.
// A Slurm reading (options.slurm, no Berth resource flag) becomes one
// Berth task per node with that node's share, on distinct nodes
// (`distinct_nodes`), with the Slurm task layout (`slurm_tasks_per_node`)
// and the variables sbatch itself exports from its options (SLURM_NTASKS,
// SLURM_CPUS_PER_TASK, SLURM_GPUS_PER_NODE, SLURM_MEM_PER_CPU...) in
// `env`; `reference_node` is the cluster's largest node, when known
// (slurm_allocation.h). `berth submit --nodes N` alone asks N tasks on
// distinct nodes.
Result<nlohmann::json> SubmissionBody(const SubmitOptions& options,
                                      const std::vector<std::string>& command,
                                      const std::string& script,
                                      const std::optional<slurm::NodeSize>& reference_node = {});

}  // namespace berth::cli
