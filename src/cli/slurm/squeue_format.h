// squeue's output formats: `-o "%.18i %.9P %j"` (a letter per field, with
// an optional '.' for right-justified and a width) and `-O
// JobID,Name:30,State:.10` (field names, 20 wide by default), parsed into
// a list of fields and printed as Slurm prints them, header included.
// The letters and names are Slurm's (src/squeue/opts.c); those Berth has
// nothing for print what Slurm prints for an unset value.
#pragma once

#include <string>
#include <vector>

#include "cli/slurm/percent_format.h"
#include "cli/slurm/slurm_job.h"
#include "cli/slurm/slurm_text.h"
#include "common/status.h"
#include "core/time.h"

namespace berth::cli::slurm {

// squeue's default, and its default with --start.
inline constexpr char kSqueueDefaultFormat[] = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
inline constexpr char kSqueueStartFormat[] = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R";

using SqueueField = FormatField;
using SqueueFormat = PercentFormat;

// `-o`: unknown letters are kept as text, as Slurm does, and named in
// `unknown` ("Invalid job format specification: x").
ParsedFormat ParseSqueueFormat(const std::string& format);
// `-O`: names are matched without case; unknown ones are named too.
ParsedFormat ParseSqueueLongFormat(const std::string& format);

// The header line and one line per job, each ending in '\n'.
std::string SqueueHeader(const SqueueFormat& format);
std::string SqueueLine(const SqueueFormat& format, const SlurmJob& job, core::Time now);

}  // namespace berth::cli::slurm
