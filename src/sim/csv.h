// The plain CSV the trace readers accept (trace.h, pai2023.h): one set of
// rules, so every reader splits lines and fields the same way.
//
// - Lines end in "\n" or "\r\n"; a final newline does not start another
//   line. A UTF-8 byte order mark before the header is not part of it.
// - Fields are split at every comma and trimmed of spaces and tabs; an
//   empty field is "" (the readers take it as "not given" where a column
//   is optional).
// - No quoting: a double quote anywhere in a data row makes it a bad row
//   ("quoted field") rather than a row split inside quotes, or read with
//   its quotes, that would quietly be wrong. None of the traces quotes.
// - Blank lines (spaces and tabs only) are not rows, as in Python's csv:
//   the readers skip lines for which IsBlank holds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace berth::sim {

// Why a row is not an item: `reason` is the key the readers count skipped
// rows by (TraceLoad::skipped), `message` names the field and the value.
struct BadRow {
  std::string reason;
  std::string message;
};

// The physical lines of a text, without their "\n" or "\r\n".
class CsvLines {
 public:
  explicit CsvLines(std::string_view text) : rest_(text) {}

  std::optional<std::string_view> Next();
  // The 1-based number of the line Next() returned last.
  int64_t number() const { return number_; }

 private:
  std::string_view rest_;
  int64_t number_ = 0;
};

// `text` without a UTF-8 byte order mark at its start.
std::string_view StripUtf8Bom(std::string_view text);

// `text` without spaces and tabs at either end.
std::string_view TrimCsvField(std::string_view text);

// Whether a line holds only spaces and tabs (it is not a row).
bool IsBlank(std::string_view line);

// The fields of a line, split at every comma and trimmed; one field at
// least. For headers: a quoted name is kept with its quotes (and is then
// an unknown column).
std::vector<std::string_view> SplitCsvFields(std::string_view line);

// The fields of a data row that must have `columns` of them, or why it is
// not a row: "quoted field", or "wrong column count".
std::variant<std::vector<std::string_view>, BadRow> SplitCsvRow(std::string_view line,
                                                                size_t columns);

}  // namespace berth::sim
