// sacct's output: `--format` fields (names without case, an optional
// "%WIDTH"), printed in columns (each field padded to its width and cut
// with a '+', a dashed line under the header) or, with -P/-p, separated by
// '|' (-p ends each line with one too), as Slurm's print_fields does. The
// field names, default widths and forms are Slurm's (src/sacct/sacct.c).
// Under a job's row, as Slurm's accounting lists them (unless -X): its
// batch script's row ("12.batch") and one per srun step ("12.0", "12.1").
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/slurm/slurm_job.h"
#include "common/status.h"
#include "core/time.h"

namespace berth::cli::slurm {

inline constexpr char kSacctDefaultFormat[] =
    "jobid,jobname,partition,account,alloccpus,state,exitcode";

struct SacctField {
  int index = 0;  // into the field table
  int width = 0;  // negative: left-justified, as Slurm writes it
};

// InvalidArgument naming the field Slurm would not know ("sacct: error:
// Invalid field requested: \"Bogus\"").
Result<std::vector<SacctField>> ParseSacctFormat(const std::string& format);

enum class SacctLayout {
  kColumns,
  kParsable,       // -p: "a|b|"
  kParsableNoEnd,  // -P: "a|b"
};

// Whether a `-j` word names the job: "12" job 12 and, if 12 is an array's
// id, every element of it (as Slurm's sacct lists them); "12_3" element 3.
bool IsNamedBy(const SlurmJob& job, const std::string& id);

// A `-j` word: the job or array element it names ("12", "12_3"; for
// IsNamedBy) and, when it names a row under them ("12.batch", "12_3.0"),
// that row's suffix. InvalidArgument for anything else.
struct SacctJobWord {
  std::string job;
  std::optional<std::string> step;
};
Result<SacctJobWord> ParseSacctJobWord(const std::string& word);

// A row under a job: its batch script or one of its srun steps. Its
// allocation is its job's on the row's nodes (the batch script: the first
// node), as Slurm's rows show theirs.
struct SacctStep {
  std::string suffix;     // "batch", or the step's id
  std::string name;       // "batch", or the step's program ("true" for `srun true`)
  std::string state;      // RUNNING, COMPLETED, FAILED, CANCELLED
  std::string exit_code;  // "code:signal"
  std::optional<core::Time> start_time;
  std::optional<core::Time> end_time;
  std::vector<std::string> nodes;
  int64_t tasks = 1;
  int64_t cpus = 0;
  int64_t gpus = 0;
  int64_t memory_mib = 0;
};

// A batch job's ".batch" row once it started: its script's outcome (a
// script ended by a signal is CANCELLED, as Slurm's) on the job's first
// node. None for a job that never started, or is not a batch job.
std::optional<SacctStep> BatchStep(const SlurmJob& job);
// A step of `job` from the API's step JSON (GET /api/v1/jobs/{id}/steps).
SacctStep StepFromJson(const SlurmJob& job, const nlohmann::json& step);

std::string SacctHeader(const std::vector<SacctField>& fields, SacctLayout layout);
// `canceller_uid`: the uid of whoever cancelled it ("CANCELLED by 0"), or
// empty when unknown.
std::string SacctLine(const std::vector<SacctField>& fields, SacctLayout layout,
                      const SlurmJob& job, core::Time now, const std::string& canceller_uid);
// The row of `step`, under `job`'s.
std::string SacctStepLine(const std::vector<SacctField>& fields, SacctLayout layout,
                          const SlurmJob& job, const SacctStep& step, core::Time now);

}  // namespace berth::cli::slurm
