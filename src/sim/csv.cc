#include "sim/csv.h"

namespace berth::sim {

std::optional<std::string_view> CsvLines::Next() {
  if (rest_.empty()) return std::nullopt;
  const size_t end = rest_.find('\n');
  std::string_view line = rest_.substr(0, end);
  rest_ = end == std::string_view::npos ? std::string_view() : rest_.substr(end + 1);
  ++number_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

std::string_view StripUtf8Bom(std::string_view text) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  return text.starts_with(kBom) ? text.substr(kBom.size()) : text;
}

std::string_view TrimCsvField(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t") - begin + 1);
}

bool IsBlank(std::string_view line) { return TrimCsvField(line).empty(); }

std::vector<std::string_view> SplitCsvFields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t begin = 0;
  while (true) {
    const size_t comma = line.find(',', begin);
    fields.push_back(TrimCsvField(line.substr(begin, comma - begin)));
    if (comma == std::string_view::npos) return fields;
    begin = comma + 1;
  }
}

std::variant<std::vector<std::string_view>, BadRow> SplitCsvRow(std::string_view line,
                                                                size_t columns) {
  if (line.find('"') != std::string_view::npos) {
    return BadRow{"quoted field", "double quotes are not supported (fields split at every comma)"};
  }
  std::vector<std::string_view> fields = SplitCsvFields(line);
  if (fields.size() != columns) {
    return BadRow{"wrong column count", "expected " + std::to_string(columns) + " fields, got " +
                                            std::to_string(fields.size())};
  }
  return fields;
}

}  // namespace berth::sim
