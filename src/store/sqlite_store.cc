#include "store/sqlite_store.h"

#include <sqlite3.h>

#include <cctype>
#include <climits>
#include <exception>
#include <type_traits>
#include <utility>
#include <variant>

#include "store/sql_store.h"
#include "store/store.h"

namespace berth::store {
namespace {

// SqlConnection's `$N` placeholders as SQLite's numbered `?N`.
std::string WithSqlitePlaceholders(std::string_view sql) {
  std::string out(sql);
  for (size_t i = 0; i + 1 < out.size(); ++i) {
    if (out[i] == '$' && std::isdigit(static_cast<unsigned char>(out[i + 1]))) out[i] = '?';
  }
  return out;
}

StatusCode CodeFor(int extended_code) {
  switch (extended_code & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PROTOCOL:
      return StatusCode::kUnavailable;  // the disk or the lock, not the request
    case SQLITE_CONSTRAINT:
      if (extended_code == SQLITE_CONSTRAINT_UNIQUE ||
          extended_code == SQLITE_CONSTRAINT_PRIMARYKEY) {
        return StatusCode::kAlreadyExists;
      }
      if (extended_code == SQLITE_CONSTRAINT_FOREIGNKEY) return StatusCode::kFailedPrecondition;
      return StatusCode::kInternal;
    default:
      return StatusCode::kInternal;
  }
}

}  // namespace

Result<std::unique_ptr<SqliteConnection>> SqliteConnection::Open(const std::string& path) {
  sqlite3* db = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return Unavailable("sqlite: cannot open " + path + ": " + message);
  }
  std::unique_ptr<SqliteConnection> connection(new SqliteConnection(db));
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  BERTH_ASSIGN_OR_RETURN(std::vector<SqlRow> mode, connection->Exec("PRAGMA journal_mode=WAL", {}));
  if (mode.size() != 1 || mode[0].empty() || mode[0][0].value_or("") != "wal") {
    return Unavailable("sqlite: " + path + ": cannot use the WAL journal (mode is '" +
                       (mode.empty() || mode[0].empty() ? "" : mode[0][0].value_or("")) + "')");
  }
  BERTH_RETURN_IF_ERROR(connection->Exec("PRAGMA synchronous=FULL", {}).status());
  BERTH_RETURN_IF_ERROR(connection->Exec("PRAGMA foreign_keys=ON", {}).status());
  return connection;
}

Result<std::unique_ptr<SqliteConnection>> SqliteConnection::OpenWriter(const std::string& path) {
  BERTH_ASSIGN_OR_RETURN(std::unique_ptr<SqliteConnection> connection, Open(path));
  BERTH_ASSIGN_OR_RETURN(connection->checkpointer_, WalCheckpointer::Start(path));
  // Replaces SQLite's automatic checkpoint (itself a WAL hook).
  sqlite3_wal_hook(
      connection->db_,
      [](void* checkpointer, sqlite3* db, const char*, int frames) {
        if (static_cast<WalCheckpointer*>(checkpointer)->Notify(frames)) {
          // As SQLite's own automatic checkpoint does, from inside the
          // commit; SQLITE_BUSY while the checkpointer's is under way.
          (void)sqlite3_wal_checkpoint_v2(db, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
        }
        return SQLITE_OK;
      },
      connection->checkpointer_.get());
  return connection;
}

SqliteConnection::~SqliteConnection() {
  if (checkpointer_) sqlite3_wal_hook(db_, nullptr, nullptr);
  checkpointer_.reset();
  for (auto& [sql, statement] : statements_) sqlite3_finalize(statement);
  sqlite3_close(db_);
}

Status SqliteConnection::Error(int code, std::string_view context) const {
  return Status(CodeFor(code), "sqlite: " + std::string(context) + ": " + sqlite3_errmsg(db_));
}

Result<sqlite3_stmt*> SqliteConnection::Prepare(std::string_view sql) {
  if (auto it = statements_.find(sql); it != statements_.end()) return it->second;
  const std::string text = WithSqlitePlaceholders(sql);
  sqlite3_stmt* statement = nullptr;
  const int rc = sqlite3_prepare_v3(db_, text.c_str(), static_cast<int>(text.size()),
                                    SQLITE_PREPARE_PERSISTENT, &statement, nullptr);
  if (rc != SQLITE_OK) return Error(sqlite3_extended_errcode(db_), "prepare '" + text + "'");
  if (statement == nullptr) return Internal("sqlite: empty statement '" + text + "'");
  statements_.emplace(std::string(sql), statement);
  return statement;
}

Result<std::vector<SqlRow>> SqliteConnection::Exec(std::string_view sql,
                                                   const std::vector<SqlValue>& params) {
  BERTH_ASSIGN_OR_RETURN(sqlite3_stmt * statement, Prepare(sql));
  // Leaves the cached statement reset and unbound however this returns, so
  // it holds no read snapshot open between calls.
  struct Reset {
    sqlite3_stmt* statement;
    ~Reset() {
      sqlite3_reset(statement);
      sqlite3_clear_bindings(statement);
    }
  } reset{statement};

  if (static_cast<size_t>(sqlite3_bind_parameter_count(statement)) != params.size()) {
    return Internal("sqlite: '" + std::string(sql) + "' takes " +
                    std::to_string(sqlite3_bind_parameter_count(statement)) + " parameters, got " +
                    std::to_string(params.size()));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const int index = static_cast<int>(i + 1);
    int rc = SQLITE_OK;
    if (const auto* number = std::get_if<int64_t>(&params[i])) {
      rc = sqlite3_bind_int64(statement, index, *number);
    } else if (const auto* text = std::get_if<std::string>(&params[i])) {
      if (text->size() > static_cast<size_t>(INT_MAX)) {
        return Internal("sqlite: parameter $" + std::to_string(index) + " is too long");
      }
      rc = sqlite3_bind_text(statement, index, text->data(), static_cast<int>(text->size()),
                             SQLITE_TRANSIENT);
    } else {
      rc = sqlite3_bind_null(statement, index);
    }
    if (rc != SQLITE_OK) return Error(rc, "bind $" + std::to_string(index));
  }

  std::vector<SqlRow> rows;
  while (true) {
    const int rc = sqlite3_step(statement);
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) return Error(sqlite3_extended_errcode(db_), sql);
    const int columns = sqlite3_column_count(statement);
    SqlRow row;
    row.reserve(static_cast<size_t>(columns));
    for (int c = 0; c < columns; ++c) {
      if (sqlite3_column_type(statement, c) == SQLITE_NULL) {
        row.emplace_back();
        continue;
      }
      const unsigned char* text = sqlite3_column_text(statement, c);
      const int bytes = sqlite3_column_bytes(statement, c);
      row.emplace_back(
          std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(bytes)));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path) {
  try {
    SqlStoreOptions options;
    options.dialect = SqlDialect::kSqlite;
    options.connect = [path]() -> Result<std::unique_ptr<SqlConnection>> {
      BERTH_ASSIGN_OR_RETURN(std::unique_ptr<SqliteConnection> connection,
                             SqliteConnection::Open(path));
      return std::unique_ptr<SqlConnection>(std::move(connection));
    };
    options.connect_writer = [path]() -> Result<std::unique_ptr<SqlConnection>> {
      BERTH_ASSIGN_OR_RETURN(std::unique_ptr<SqliteConnection> connection,
                             SqliteConnection::OpenWriter(path));
      return std::unique_ptr<SqlConnection>(std::move(connection));
    };
    return SqlStore::Open(std::move(options));
  } catch (const std::exception& e) {
    return Internal(std::string("sqlite: open ") + path + ": " + e.what());
  }
}

}  // namespace berth::store
