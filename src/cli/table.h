// Human output for client commands: aligned tables, short durations, and
// colors only when stdout is a terminal (and NO_COLOR is unset).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/time.h"

namespace berth::cli {

struct Cell {
  std::string text;
  const char* color = nullptr;  // an ANSI SGR code like "32", or none
};

class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void Add(std::vector<Cell> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.empty(); }
  // Columns padded to their widest cell; the last column is not padded.
  std::string Render(bool color) const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<Cell>> rows_;
};

// Whether stdout takes colors: a terminal, and NO_COLOR unset.
bool ColorOutput();
// The color of a job or node state word ("running" green, "failed" red...).
const char* StateColor(const std::string& state);

// "45s", "12m", "3h05m", "2d04h".
std::string ShortDuration(double seconds);
// A job's JSON time field (RFC 3339 or null) as a Time.
std::optional<core::Time> JsonTime(const nlohmann::json& value);
// "14:05" today, else "Dec 03 14:05" (local time).
std::string ShortClock(core::Time time);
// Whether an ETA's text names its time zone: alone on a line it does; in a
// table column, where every row would repeat it, it does not.
enum class ZoneName { kShown, kLeftOut };
// A pending job's (or an explanation's) ETA in the one format of
// common/eta_text.h, local time: "expected 14:05, 80%: 13:50-14:40 CET";
// empty when it has none.
std::string EtaSummary(const nlohmann::json& fields, ZoneName zone);
// A started job's first ETA (the API's `first_eta`) and how it turned out,
// local time: "expected 14:05, 80%: 13:50-14:40 CET; started 14:12: right,
// inside the 80%"; empty when it has none.
std::string FirstEtaSummary(const nlohmann::json& first_eta);
// Whole GPUs per task and tasks as "4", "2x8", or "0.5" for a share.
std::string GpuSummary(const nlohmann::json& job);
// What --constraint can name on a node (GET /nodes JSON): its features, then
// its labels as key=value, comma-separated: "ib,nvlink,rack=r1"; "-" if none.
std::string NodeFeatures(const nlohmann::json& node);
// The server's sentences join their clauses with "; " ("waiting for 2 GPUs
// to free up; 0 of 3 nodes can start it now: ...; position 2 in the
// queue"): one clause a line, the lines after the first indented by
// `indent` spaces, no newline at the end.
std::string ClauseLines(const std::string& sentence, size_t indent);

}  // namespace berth::cli
