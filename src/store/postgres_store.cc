#include "store/postgres_store.h"

#include <libpq-fe.h>

#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <variant>

#include "store/leader_lease.h"
#include "store/sql_store.h"
#include "store/store.h"

namespace berth::store {
namespace {

// libpq prints NOTICEs ("relation already exists, skipping") to stderr by
// default; the store has nothing to learn from them.
void IgnoreNotice(void* /*arg*/, const char* /*message*/) {}

std::string Trimmed(const char* message) {
  std::string text = message != nullptr ? message : "";
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// SQLSTATE classes: 08 connection exception, 53 insufficient resources,
// 57P admin/crash shutdown, 40001/40P01 serialization failure and deadlock
// (all worth retrying later); 23505 unique and 23503 foreign-key violations.
StatusCode CodeFor(std::string_view sqlstate) {
  if (sqlstate == "23505") return StatusCode::kAlreadyExists;
  if (sqlstate == "23503") return StatusCode::kFailedPrecondition;
  if (sqlstate.starts_with("08") || sqlstate.starts_with("53") || sqlstate.starts_with("57P") ||
      sqlstate == "40001" || sqlstate == "40P01") {
    return StatusCode::kUnavailable;
  }
  return StatusCode::kInternal;
}

}  // namespace

Result<std::unique_ptr<PostgresConnection>> PostgresConnection::Connect(const std::string& url) {
  // `url` comes last so that what it says overrides these defaults.
  const std::string timeout = std::to_string(kConnectTimeoutS);
  const char* keywords[] = {"connect_timeout", "fallback_application_name", "dbname", nullptr};
  const char* values[] = {timeout.c_str(), "berth", url.c_str(), nullptr};
  PGconn* connection = PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
  if (connection == nullptr) return Unavailable("postgres: cannot allocate a connection");
  if (PQstatus(connection) != CONNECTION_OK) {
    // The message names host and port, never the URL (it may hold a password).
    const std::string message = Trimmed(PQerrorMessage(connection));
    PQfinish(connection);
    return Unavailable("postgres: cannot connect: " + message);
  }
  PQsetNoticeProcessor(connection, IgnoreNotice, nullptr);
  return std::unique_ptr<PostgresConnection>(new PostgresConnection(connection));
}

PostgresConnection::~PostgresConnection() { PQfinish(connection_); }

bool PostgresConnection::broken() const { return PQstatus(connection_) == CONNECTION_BAD; }

Status PostgresConnection::Reconnect() {
  PQreset(connection_);
  if (PQstatus(connection_) != CONNECTION_OK) {
    return Unavailable("postgres: reconnect failed: " + Trimmed(PQerrorMessage(connection_)));
  }
  return Status::Ok();
}

Result<std::vector<SqlRow>> PostgresConnection::Exec(std::string_view sql,
                                                     const std::vector<SqlValue>& params) {
  // Every value goes out as text (or NULL); the server infers its type from
  // where the placeholder stands.
  std::vector<std::string> texts(params.size());
  std::vector<const char*> values(params.size(), nullptr);
  for (size_t i = 0; i < params.size(); ++i) {
    if (const auto* number = std::get_if<int64_t>(&params[i])) {
      texts[i] = std::to_string(*number);
      values[i] = texts[i].c_str();
    } else if (const auto* text = std::get_if<std::string>(&params[i])) {
      if (text->find('\0') != std::string::npos) {
        return InvalidArgument("postgres: parameter $" + std::to_string(i + 1) +
                               " holds a NUL byte, which text cannot store");
      }
      values[i] = text->c_str();
    }
  }
  const std::string statement(sql);
  std::unique_ptr<PGresult, decltype(&PQclear)> result(
      PQexecParams(connection_, statement.c_str(), static_cast<int>(params.size()), nullptr,
                   values.data(), nullptr, nullptr, /*resultFormat=*/0),
      PQclear);
  if (result == nullptr) {
    return Unavailable("postgres: " + Trimmed(PQerrorMessage(connection_)));
  }
  const ExecStatusType status = PQresultStatus(result.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    const char* sqlstate = PQresultErrorField(result.get(), PG_DIAG_SQLSTATE);
    const StatusCode code =
        broken() ? StatusCode::kUnavailable : CodeFor(sqlstate != nullptr ? sqlstate : "");
    return Status(code, "postgres: " + Trimmed(PQresultErrorMessage(result.get())));
  }
  const int row_count = PQntuples(result.get());
  const int column_count = PQnfields(result.get());
  std::vector<SqlRow> rows(static_cast<size_t>(row_count));
  for (int r = 0; r < row_count; ++r) {
    SqlRow& row = rows[static_cast<size_t>(r)];
    row.reserve(static_cast<size_t>(column_count));
    for (int c = 0; c < column_count; ++c) {
      if (PQgetisnull(result.get(), r, c)) {
        row.emplace_back();
      } else {
        row.emplace_back(std::string(PQgetvalue(result.get(), r, c),
                                     static_cast<size_t>(PQgetlength(result.get(), r, c))));
      }
    }
  }
  return rows;
}

Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& url) {
  return OpenPostgresStore(url, GroupCommitter::Options{});
}

Result<std::unique_ptr<Store>> OpenLeaderStore(const std::string& url, const LeaderLease& lease) {
  GroupCommitter::Options writer;
  writer.fence = lease.Fence();
  return OpenPostgresStore(url, std::move(writer));
}

Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& url,
                                                 GroupCommitter::Options writer) {
  try {
    SqlStoreOptions options;
    options.writer = std::move(writer);
    options.dialect = SqlDialect::kPostgres;
    options.connect = [url]() -> Result<std::unique_ptr<SqlConnection>> {
      BERTH_ASSIGN_OR_RETURN(std::unique_ptr<PostgresConnection> connection,
                             PostgresConnection::Connect(url));
      return std::unique_ptr<SqlConnection>(std::move(connection));
    };
    return SqlStore::Open(std::move(options));
  } catch (const std::exception& e) {
    return Internal(std::string("postgres: open: ") + e.what());
  }
}

}  // namespace berth::store
