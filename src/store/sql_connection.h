// SqlConnection: the little of a database driver that SqlStore needs, so one
// implementation of the Store's queries runs on SQLite and on PostgreSQL.
//
// Statements use PostgreSQL's `$1, $2, ...` placeholders (the SQLite driver
// maps them to its `?NNN`); values travel only as parameters, never inside
// the SQL text. Rows come back as text cells (NULL as nullopt), which is what
// libpq returns and what SQLite converts to, so the code reading rows is one.
//
// Not thread-safe: one thread uses a connection at a time (SqlStore's writer
// thread owns one; readers borrow from a pool).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/status.h"

namespace berth::store {

// A parameter: NULL, an integer or text.
using SqlValue = std::variant<std::monostate, int64_t, std::string>;

using SqlRow = std::vector<std::optional<std::string>>;

class SqlConnection {
 public:
  virtual ~SqlConnection() = default;

  // Runs one statement and returns its rows (none for statements without
  // results). Errors: Unavailable when the database cannot be reached or is
  // busy, AlreadyExists for a unique-key collision, Internal otherwise; the
  // message names the database's error.
  virtual Result<std::vector<SqlRow>> Exec(std::string_view sql,
                                           const std::vector<SqlValue>& params) = 0;

  // Whether the link to the server is gone (PostgreSQL). A broken connection
  // fails every statement until Reconnect succeeds; an open transaction on it
  // is lost (rolled back by the server).
  virtual bool broken() const = 0;
  virtual Status Reconnect() = 0;
};

// Cells of a row, parsed. Errors name the column and the value (a row that
// does not parse is a bug or a corrupted database: Internal).
Result<int64_t> CellInt64(const SqlRow& row, size_t column, std::string_view name);
Result<std::optional<int64_t>> CellOptionalInt64(const SqlRow& row, size_t column,
                                                 std::string_view name);
Result<std::string> CellText(const SqlRow& row, size_t column, std::string_view name);

}  // namespace berth::store
