// Trace readers: real cluster traces into one neutral job list.
//
// Formats (all may be gzip-compressed; gzip is detected by its magic bytes
// 1f 8b, not by the file name):
//   philly  the Philly job table (philly-pollux): timestamp,duration,num_gpus,
//           gpu_time,cluster. Timestamps "YYYY-MM-DD HH:MM:SS" are read as UTC
//           (the trace gives no zone); `cluster` (the virtual cluster) becomes
//           the job's queue; gpu_time (= duration x num_gpus) is not used.
//   itp     Microsoft ITP 2021 raw: job_id,submission_time,duration,num_gpu;
//           times are seconds from the trace start, mapped to the Unix epoch.
//   csv     Berth's generic CSV (docs/simulator.md): a header naming columns;
//           required submit_s, duration_s, gpus; optional id, limit_s,
//           estimate_s, user, queue, name, tasks, priority, preemptible,
//           gpu_type (models separated by '|': any of them), constraint (a
//           node feature expression, core/constraint.h: "ib&nvlink").
//
// Every format binds its columns by header name, so column order is free.
// The header is line 1 (a UTF-8 byte order mark before it is ignored); an
// unknown, duplicate or missing required column fails the read with
// InvalidArgument naming it. Lines end in "\n" or "\r\n"; blank lines are not
// rows (as in Python's csv). Fields are split at every comma and trimmed of
// spaces and tabs; quoting is not supported, so a row with a double quote is
// a bad row ("quoted field") rather than being split wrongly.
//
// Field rules: times and durations are decimal seconds >= 0, parsed exactly
// (ParseDecimalMicros). gpus is the job's total, a whole number >= 0 ("1.0" is
// accepted, "1.5" is not; 0 is a CPU-only job). In csv: tasks is >= 1 and
// must divide gpus; limit_s is > 0; priority is a signed 32-bit integer;
// preemptible is 0, 1, true or false (any case). An empty field in an
// optional csv column means "not given".
//
// Bad rows are never dropped silently: each is counted under its reason ("bad
// <column>", "wrong column count", "quoted field", "gpus not divisible by
// tasks"), and the first few are kept as "file:line: message" for the user.
// A row is checked before the --from/--to window, so a bad row is reported
// even outside the window; rows outside it are counted but are not examples.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "core/time.h"

namespace berth::sim {

enum class TraceFormat { kPhilly, kItp, kCsv };

Result<TraceFormat> ParseTraceFormat(std::string_view name);

struct TraceJob {
  int64_t line = 0;      // 1-based line in the file; the header is line 1
  std::string trace_id;  // the trace's own id when it has one
  core::Time submit;
  core::Duration duration;  // true run time
  int32_t gpus = 0;         // total whole GPUs
  int32_t tasks = 0;        // 0: the simulator splits by node size
  std::string queue;        // virtual cluster / team
  std::string user;
  std::string name;
  std::optional<core::Duration> time_limit;
  std::optional<core::Duration> estimate;
  int32_t priority = 0;
  bool preemptible = false;
  std::vector<std::string> gpu_types;  // any of these models; empty: any
  std::string constraint;              // a node feature expression; empty: none
};

struct TraceFilter {
  std::optional<core::Time> from;  // inclusive
  std::optional<core::Time> to;    // exclusive
};

struct TraceLoad {
  std::vector<TraceJob> jobs;  // in file order
  int64_t rows = 0;            // data rows read (header excluded)
  // Rows not turned into jobs, by reason ("outside --from/--to", "bad
  // duration", ...). Every row read is either a job or counted here.
  std::map<std::string, int64_t> skipped;
  // The first bad rows, "path:line: message".
  std::vector<std::string> examples;
};

// Reads the whole trace into memory. Fails with NotFound when the file
// cannot be opened, and with InvalidArgument when its header is not the
// format's or its gzip data is corrupt or truncated. Bad rows do not fail the
// read unless `strict` is set, in which case the first one does, with the
// same "file:line: message" that would have been its example.
struct ReadOptions {
  TraceFilter filter;
  bool strict = false;
  size_t max_examples = 10;
};
Result<TraceLoad> ReadTrace(const std::string& path, TraceFormat format,
                            const ReadOptions& options = {});

// "2017-10-01", "2017-10-01 08:30:00" (UTC) or a plain number of seconds
// since the epoch / trace start ("86400", "3600.5"). Dates are converted by
// integer arithmetic (no timegm, TZ or locale) and checked for real months,
// days (leap years included) and times of day; errors quote the text.
Result<core::Time> ParseTimeArg(std::string_view text);

// Exact decimal seconds ("11.8", "2240194.0", "42") to microseconds; no
// floating point, so trace values round-trip exactly. The form is
// DIGITS[.DIGITS]: no sign, exponent, spaces or bare "." ends. nullopt if
// malformed, negative, out of int64 range, or finer than a microsecond
// (digits past the sixth decimal are accepted only when they are zeros).
std::optional<int64_t> ParseDecimalMicros(std::string_view text);

}  // namespace berth::sim
