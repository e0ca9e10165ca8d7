// sacct's output: `--format` fields (names without case, an optional
// "%WIDTH"), printed in columns (each field padded to its width and cut
// with a '+', a dashed line under the header) or, with -P/-p, separated by
// '|' (-p ends each line with one too), as Slurm's print_fields does. The
// field names, default widths and forms are Slurm's (src/sacct/sacct.c).
// Berth keeps no job steps: every job is one line, as with sacct -X.
#pragma once

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

std::string SacctHeader(const std::vector<SacctField>& fields, SacctLayout layout);
// `canceller_uid`: the uid of whoever cancelled it ("CANCELLED by 0"), or
// empty when unknown.
std::string SacctLine(const std::vector<SacctField>& fields, SacctLayout layout,
                      const SlurmJob& job, core::Time now, const std::string& canceller_uid);

}  // namespace berth::cli::slurm
