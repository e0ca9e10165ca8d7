// Trace readers. The pipeline per file:
//
//   file --(gunzip if magic)--> text --lines--> header --bind--> columns
//        each data line --split--> fields --ApplyField per column--> TraceJob
//                                                  \--> BadRow{reason, message}
//
// Each format is only a column schema (name -> TraceJob field), so the three
// formats share one parser and one set of bad-row rules. Lines and fields
// follow the CSV rules of csv.h, which the pai2023 reader shares.
#include "sim/trace.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <span>
#include <utility>
#include <variant>

#include "common/time_format.h"
#include "core/constraint.h"
#include "sim/csv.h"

namespace berth::sim {
namespace {

using core::Duration;
using core::Time;

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr size_t kMaxFractionDigits = 6;  // microseconds
constexpr std::string_view kOutsideWindow = "outside --from/--to";

// ---------------------------------------------------------------------------
// Numbers and civil time, exact and locale-free.

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// A non-empty run of ASCII digits as int64; nullopt on anything else or on
// overflow.
std::optional<int64_t> ParseDigits(std::string_view digits) {
  if (digits.empty()) return std::nullopt;
  int64_t value = 0;
  for (char c : digits) {
    if (!IsDigit(c)) return std::nullopt;
    const int64_t digit = c - '0';
    if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

// True when `text` has the shape of `pattern`, where 'd' stands for a digit.
bool MatchesPattern(std::string_view text, std::string_view pattern) {
  if (text.size() != pattern.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (pattern[i] == 'd' ? !IsDigit(text[i]) : text[i] != pattern[i]) return false;
  }
  return true;
}

// "YYYY-MM-DD" or "YYYY-MM-DD HH:MM:SS", read as UTC. The message does not
// repeat the text; callers add it with the field's name.
Result<Time> ParseCivilTime(std::string_view text) {
  constexpr std::string_view kPattern = "dddd-dd-dd dd:dd:dd";
  const bool with_time = MatchesPattern(text, kPattern);
  if (!with_time && !MatchesPattern(text, kPattern.substr(0, 10))) {
    return InvalidArgument("must be YYYY-MM-DD or YYYY-MM-DD HH:MM:SS");
  }
  // The pattern guarantees digits, so these cannot fail.
  auto at = [&](size_t pos, size_t len) { return *ParseDigits(text.substr(pos, len)); };
  const int64_t year = at(0, 4), month = at(5, 2), day = at(8, 2);
  const int64_t hour = with_time ? at(11, 2) : 0;
  const int64_t minute = with_time ? at(14, 2) : 0;
  const int64_t second = with_time ? at(17, 2) : 0;
  if (month < 1 || month > 12) return InvalidArgument("month must be 01..12");
  if (day < 1 || day > DaysInMonth(year, static_cast<int>(month))) {
    return InvalidArgument("day must be 01.." +
                           std::to_string(DaysInMonth(year, static_cast<int>(month))) +
                           " in that month");
  }
  if (hour > 23 || minute > 59 || second > 59) {
    return InvalidArgument("time of day must be 00:00:00..23:59:59");
  }
  const int64_t seconds =
      DaysFromCivil(year, static_cast<int>(month), static_cast<int>(day)) * 86400 + hour * 3600 +
      minute * 60 + second;
  return Time::FromSeconds(seconds);
}

// ---------------------------------------------------------------------------
// Field parsers. Each returns "must be ..." on failure; the row parser adds
// the column's name and the offending value.

Result<Duration> ParseSeconds(std::string_view value) {
  const std::optional<int64_t> micros = ParseDecimalMicros(value);
  if (!micros) return InvalidArgument("must be seconds >= 0 with at most 6 decimals");
  return Duration::Micros(*micros);
}

Result<Duration> ParsePositiveSeconds(std::string_view value) {
  Result<Duration> seconds = ParseSeconds(value);
  // A zero limit would stop every job as it starts: surely a data error.
  if (seconds.ok() && *seconds == Duration::Zero()) return InvalidArgument("must be > 0 seconds");
  return seconds;
}

Result<Time> ParseOffsetTime(std::string_view value) {
  Result<Duration> offset = ParseSeconds(value);
  if (!offset.ok()) return offset.status();
  return Time::Epoch() + *offset;
}

// A whole number in [min, int32 max]. Goes through the decimal parser so
// that "1.0" (a float column written by pandas) is accepted and "1.5" is not.
Result<int32_t> ParseCount(std::string_view value, int32_t min) {
  const std::optional<int64_t> micros = ParseDecimalMicros(value);
  const int64_t whole = micros ? *micros / kMicrosPerSecond : -1;
  if (!micros || *micros % kMicrosPerSecond != 0 || whole < min ||
      whole > std::numeric_limits<int32_t>::max()) {
    return InvalidArgument("must be a whole number >= " + std::to_string(min));
  }
  return static_cast<int32_t>(whole);
}

Result<int32_t> ParseInt32(std::string_view value) {
  int32_t out = 0;
  const char* end = value.data() + value.size();
  const auto [stop, error] = std::from_chars(value.data(), end, out);
  if (error != std::errc() || stop != end) return InvalidArgument("must be a 32-bit integer");
  return out;
}

Result<bool> ParseBool(std::string_view value) {
  std::string lower(value);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  if (lower == "1" || lower == "true") return true;
  if (lower == "0" || lower == "false") return false;
  return InvalidArgument("must be 0, 1, true or false");
}

// ---------------------------------------------------------------------------
// Formats as column schemas.

// The TraceJob member a column fills.
enum class Field {
  kTraceId,
  kSubmitSeconds,  // decimal seconds since the epoch / trace start
  kSubmitCivil,    // "YYYY-MM-DD HH:MM:SS" UTC
  kDuration,
  kGpus,
  kTasks,
  kLimit,
  kEstimate,
  kQueue,
  kUser,
  kName,
  kPriority,
  kPreemptible,
  kGpuTypes,    // "A100|H100": models, any of which will do
  kConstraint,  // a node feature expression (core/constraint.h)
  kIgnored,
};

enum class Need { kRequired, kOptional };

struct Column {
  std::string_view name;
  Field field;
  Need need;
};

constexpr std::array kPhillyColumns = {
    Column{"timestamp", Field::kSubmitCivil, Need::kRequired},
    Column{"duration", Field::kDuration, Need::kRequired},
    Column{"num_gpus", Field::kGpus, Need::kRequired},
    // duration x num_gpus in every row (see the trace's README): redundant,
    // but required so that a file that is not the Philly table is refused.
    Column{"gpu_time", Field::kIgnored, Need::kRequired},
    Column{"cluster", Field::kQueue, Need::kRequired},
};

constexpr std::array kItpColumns = {
    Column{"job_id", Field::kTraceId, Need::kRequired},
    Column{"submission_time", Field::kSubmitSeconds, Need::kRequired},
    Column{"duration", Field::kDuration, Need::kRequired},
    Column{"num_gpu", Field::kGpus, Need::kRequired},
};

constexpr std::array kCsvColumns = {
    Column{"id", Field::kTraceId, Need::kOptional},
    Column{"submit_s", Field::kSubmitSeconds, Need::kRequired},
    Column{"duration_s", Field::kDuration, Need::kRequired},
    Column{"gpus", Field::kGpus, Need::kRequired},
    Column{"limit_s", Field::kLimit, Need::kOptional},
    Column{"estimate_s", Field::kEstimate, Need::kOptional},
    Column{"user", Field::kUser, Need::kOptional},
    Column{"queue", Field::kQueue, Need::kOptional},
    Column{"name", Field::kName, Need::kOptional},
    Column{"tasks", Field::kTasks, Need::kOptional},
    Column{"priority", Field::kPriority, Need::kOptional},
    Column{"preemptible", Field::kPreemptible, Need::kOptional},
    Column{"gpu_type", Field::kGpuTypes, Need::kOptional},
    Column{"constraint", Field::kConstraint, Need::kOptional},
};

struct FormatInfo {
  std::string_view name;
  TraceFormat format;
  std::span<const Column> columns;
};

constexpr std::array kFormats = {
    FormatInfo{"philly", TraceFormat::kPhilly, kPhillyColumns},
    FormatInfo{"itp", TraceFormat::kItp, kItpColumns},
    FormatInfo{"csv", TraceFormat::kCsv, kCsvColumns},
};

const FormatInfo& InfoFor(TraceFormat format) {
  for (const FormatInfo& info : kFormats) {
    if (info.format == format) return info;
  }
  BERTH_CHECK(false) << "unknown TraceFormat " << static_cast<int>(format);
  return kFormats[0];
}

std::string KnownColumns(const FormatInfo& format) {
  std::string out;
  for (const Column& column : format.columns) {
    out += (out.empty() ? "" : ", ") + std::string(column.name);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Reading text: files, lines, fields.

bool HasGzipMagic(std::ifstream& in) {
  std::array<char, 2> magic{};
  in.read(magic.data(), magic.size());
  const bool gzip = in.gcount() == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
                    static_cast<unsigned char>(magic[1]) == 0x8b;
  in.clear();
  in.seekg(0);
  return gzip;
}

Result<std::string> ReadGzip(const std::string& path) {
  std::unique_ptr<gzFile_s, decltype(&gzclose)> file(gzopen(path.c_str(), "rb"), &gzclose);
  if (!file) return NotFound(path + ": cannot open");
  std::string text;
  std::array<char, 1 << 16> buffer;
  int n = 0;
  while ((n = gzread(file.get(), buffer.data(), static_cast<unsigned>(buffer.size()))) > 0) {
    text.append(buffer.data(), static_cast<size_t>(n));
  }
  // Z_BUF_ERROR here means the file ends inside a gzip stream (truncated).
  int error = Z_OK;
  const char* message = gzerror(file.get(), &error);
  if (n < 0 || error != Z_OK) return InvalidArgument(path + ": bad gzip data: " + message);
  return text;
}

// The whole file as text. We check the gzip magic bytes ourselves rather
// than lean on gzopen's transparent mode, so plain files never go through
// zlib. Reading the file whole keeps line handling trivial; the job list
// built from it is held in memory anyway, so this at most doubles the peak.
Result<std::string> ReadFileText(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return NotFound(path + ": no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open");
  if (HasGzipMagic(in)) return ReadGzip(path);
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) return NotFound(path + ": read failed");
  return text;
}

// ---------------------------------------------------------------------------
// Header and rows.

// The column each header field feeds, in file order.
Result<std::vector<const Column*>> BindHeader(std::string_view header, const FormatInfo& format) {
  std::vector<const Column*> bound;
  for (std::string_view name : SplitCsvFields(header)) {
    const Column* match = nullptr;
    for (const Column& column : format.columns) {
      if (column.name == name) match = &column;
    }
    const std::string quoted = "'" + std::string(name) + "'";
    if (match == nullptr) {
      return InvalidArgument("unknown column " + quoted + " for format " +
                             std::string(format.name) + "; known: " + KnownColumns(format));
    }
    if (std::find(bound.begin(), bound.end(), match) != bound.end()) {
      return InvalidArgument("duplicate column " + quoted);
    }
    bound.push_back(match);
  }
  for (const Column& column : format.columns) {
    if (column.need == Need::kRequired &&
        std::find(bound.begin(), bound.end(), &column) == bound.end()) {
      return InvalidArgument("missing required column '" + std::string(column.name) +
                             "' for format " + std::string(format.name));
    }
  }
  return bound;
}

template <typename T, typename Out>
Status Store(Result<T> parsed, Out& out) {
  if (!parsed.ok()) return parsed.status();
  out = std::move(parsed).value();
  return Status::Ok();
}

Status ApplyField(Field field, std::string_view value, TraceJob& job) {
  switch (field) {
    case Field::kTraceId:
      job.trace_id = value;
      return Status::Ok();
    case Field::kSubmitSeconds:
      return Store(ParseOffsetTime(value), job.submit);
    case Field::kSubmitCivil:
      return Store(ParseCivilTime(value), job.submit);
    case Field::kDuration:
      return Store(ParseSeconds(value), job.duration);
    case Field::kGpus:
      return Store(ParseCount(value, 0), job.gpus);
    case Field::kTasks:
      return Store(ParseCount(value, 1), job.tasks);
    case Field::kLimit:
      return Store(ParsePositiveSeconds(value), job.time_limit);
    case Field::kEstimate:
      return Store(ParseSeconds(value), job.estimate);
    case Field::kQueue:
      job.queue = value;
      return Status::Ok();
    case Field::kUser:
      job.user = value;
      return Status::Ok();
    case Field::kName:
      job.name = value;
      return Status::Ok();
    case Field::kPriority:
      return Store(ParseInt32(value), job.priority);
    case Field::kPreemptible:
      return Store(ParseBool(value), job.preemptible);
    case Field::kGpuTypes:
      for (size_t start = 0; start <= value.size();) {
        const size_t bar = std::min(value.find('|', start), value.size());
        if (bar == start) return InvalidArgument("an empty model (separate models with '|')");
        job.gpu_types.emplace_back(value.substr(start, bar - start));
        start = bar + 1;
      }
      return Status::Ok();
    case Field::kConstraint:
      if (Result<core::FeatureExpression> parsed = core::FeatureExpression::Parse(value);
          !parsed.ok()) {
        // The row's message names the column already.
        return InvalidArgument(parsed.status().message().substr(sizeof("constraint: ") - 1));
      }
      job.constraint = value;
      return Status::Ok();
    case Field::kIgnored:
      return Status::Ok();
  }
  return Internal("unhandled trace field");
}

std::variant<TraceJob, BadRow> ParseRow(std::string_view line,
                                        const std::vector<const Column*>& columns) {
  std::variant<std::vector<std::string_view>, BadRow> split = SplitCsvRow(line, columns.size());
  if (BadRow* bad = std::get_if<BadRow>(&split)) return std::move(*bad);
  const std::vector<std::string_view>& fields = std::get<std::vector<std::string_view>>(split);
  TraceJob job;
  for (size_t i = 0; i < fields.size(); ++i) {
    const Column& column = *columns[i];
    // An empty optional field means "not given", so sparse columns work.
    if (fields[i].empty() && column.need == Need::kOptional) continue;
    const Status status = ApplyField(column.field, fields[i], job);
    if (!status.ok()) {
      const std::string name(column.name);
      return BadRow{"bad " + name,
                    name + ": " + status.message() + ", got '" + std::string(fields[i]) + "'"};
    }
  }
  if (job.tasks > 0 && job.gpus % job.tasks != 0) {
    return BadRow{"gpus not divisible by tasks", "gpus: " + std::to_string(job.gpus) +
                                                     " is not divisible by tasks " +
                                                     std::to_string(job.tasks)};
  }
  return job;
}

bool InWindow(Time submit, const TraceFilter& filter) {
  return (!filter.from || submit >= *filter.from) && (!filter.to || submit < *filter.to);
}

// Files one parsed row into `load`: a job, a skip outside the window, or a
// bad row (an error when strict).
Status Record(std::variant<TraceJob, BadRow> row, int64_t line, const std::string& path,
              const ReadOptions& options, TraceLoad& load) {
  if (BadRow* bad = std::get_if<BadRow>(&row)) {
    std::string message = path + ":" + std::to_string(line) + ": " + bad->message;
    if (options.strict) return InvalidArgument(std::move(message));
    ++load.skipped[bad->reason];
    if (load.examples.size() < options.max_examples) load.examples.push_back(std::move(message));
    return Status::Ok();
  }
  TraceJob& job = std::get<TraceJob>(row);
  if (!InWindow(job.submit, options.filter)) {
    ++load.skipped[std::string(kOutsideWindow)];
    return Status::Ok();
  }
  job.line = line;
  load.jobs.push_back(std::move(job));
  return Status::Ok();
}

}  // namespace

Result<TraceFormat> ParseTraceFormat(std::string_view name) {
  for (const FormatInfo& info : kFormats) {
    if (info.name == name) return info.format;
  }
  return InvalidArgument("trace format: must be philly, itp or csv, got '" + std::string(name) +
                         "'");
}

std::optional<int64_t> ParseDecimalMicros(std::string_view text) {
  const size_t point = text.find('.');
  const std::string_view whole = text.substr(0, point);
  const std::string_view fraction =
      point == std::string_view::npos ? std::string_view() : text.substr(point + 1);
  if (point != std::string_view::npos && fraction.empty()) return std::nullopt;  // "11."
  // Digits past the microsecond are allowed only as zeros ("2240194.0000000").
  if (fraction.size() > kMaxFractionDigits &&
      fraction.find_first_not_of('0', kMaxFractionDigits) != std::string_view::npos) {
    return std::nullopt;
  }
  std::string micro_digits(fraction.substr(0, kMaxFractionDigits));
  micro_digits.resize(kMaxFractionDigits, '0');
  const std::optional<int64_t> seconds = ParseDigits(whole);
  const std::optional<int64_t> micros = ParseDigits(micro_digits);
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if (!seconds || !micros || *seconds > (kMax - *micros) / kMicrosPerSecond) return std::nullopt;
  return *seconds * kMicrosPerSecond + *micros;
}

Result<core::Time> ParseTimeArg(std::string_view text) {
  const std::string got = ", got '" + std::string(text) + "'";
  // Dates contain '-'; numbers never do, because signs are rejected.
  if (text.find('-') != std::string_view::npos) {
    Result<Time> time = ParseCivilTime(text);
    if (!time.ok()) return InvalidArgument("time: " + time.status().message() + got);
    return time;
  }
  const std::optional<int64_t> micros = ParseDecimalMicros(text);
  if (!micros) {
    return InvalidArgument("time: must be YYYY-MM-DD, YYYY-MM-DD HH:MM:SS or seconds" + got);
  }
  return Time::FromMicros(*micros);
}

Result<TraceLoad> ReadTrace(const std::string& path, TraceFormat format,
                            const ReadOptions& options) {
  const FormatInfo& info = InfoFor(format);
  Result<std::string> text = ReadFileText(path);
  if (!text.ok()) return text.status();
  CsvLines lines(StripUtf8Bom(*text));
  const std::optional<std::string_view> header = lines.Next();
  if (!header || IsBlank(*header)) {
    return InvalidArgument(path + ":1: no header; format " + std::string(info.name) +
                           " has columns " + KnownColumns(info));
  }
  Result<std::vector<const Column*>> columns = BindHeader(*header, info);
  if (!columns.ok()) return InvalidArgument(path + ":1: " + columns.status().message());

  TraceLoad load;
  while (const std::optional<std::string_view> line = lines.Next()) {
    if (IsBlank(*line)) continue;  // not a row
    ++load.rows;
    BERTH_RETURN_IF_ERROR(Record(ParseRow(*line, *columns), lines.number(), path, options, load));
  }
  return load;
}

}  // namespace berth::sim
