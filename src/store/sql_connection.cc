#include "store/sql_connection.h"

#include <charconv>
#include <string>

namespace berth::store {

Result<std::optional<int64_t>> CellOptionalInt64(const SqlRow& row, size_t column,
                                                 std::string_view name) {
  if (column >= row.size()) {
    return Internal(std::string(name) + ": column " + std::to_string(column) + " missing");
  }
  if (!row[column]) return std::optional<int64_t>();
  const std::string& text = *row[column];
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    return Internal(std::string(name) + ": expected an integer, got '" + text + "'");
  }
  return std::optional<int64_t>(value);
}

Result<int64_t> CellInt64(const SqlRow& row, size_t column, std::string_view name) {
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> value, CellOptionalInt64(row, column, name));
  if (!value) return Internal(std::string(name) + ": unexpected NULL");
  return *value;
}

Result<std::string> CellText(const SqlRow& row, size_t column, std::string_view name) {
  if (column >= row.size()) {
    return Internal(std::string(name) + ": column " + std::to_string(column) + " missing");
  }
  if (!row[column]) return Internal(std::string(name) + ": unexpected NULL");
  return *row[column];
}

}  // namespace berth::store
