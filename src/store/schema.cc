#include "store/schema.h"

#include <string>
#include <vector>

namespace berth::store {
namespace {

// Identity columns: ascending and never reused, even after the highest row
// is deleted (SQLite needs AUTOINCREMENT for that; a PostgreSQL identity is a
// sequence, which never goes back).
std::string IdColumn(SqlDialect dialect) {
  return dialect == SqlDialect::kSqlite ? "id INTEGER PRIMARY KEY AUTOINCREMENT"
                                        : "id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY";
}

// Version 1: the first schema. Plain SQL both databases accept; only the
// identity column differs.
std::vector<std::string> Migration1(SqlDialect dialect) {
  return {
      "CREATE TABLE jobs (" + IdColumn(dialect) +
          ","
          " user_name TEXT NOT NULL,"
          " queue TEXT NOT NULL,"
          " state TEXT NOT NULL,"
          " submit_time BIGINT NOT NULL,"
          " idempotency_key TEXT,"
          " array_parent BIGINT REFERENCES jobs (id),"
          " version BIGINT NOT NULL,"
          " body TEXT NOT NULL)",
      "CREATE INDEX jobs_by_user ON jobs (user_name, id)",
      "CREATE INDEX jobs_by_queue ON jobs (queue, id)",
      "CREATE INDEX jobs_by_state ON jobs (state, id)",
      "CREATE INDEX jobs_by_idempotency_key ON jobs (user_name, idempotency_key)",
      "CREATE INDEX jobs_by_array_parent ON jobs (array_parent)",
      "CREATE TABLE submissions ("
      " user_name TEXT NOT NULL,"
      " idempotency_key TEXT NOT NULL,"
      " PRIMARY KEY (user_name, idempotency_key))",
      "CREATE TABLE tokens ("
      " id TEXT PRIMARY KEY,"
      " hash TEXT NOT NULL UNIQUE,"
      " user_name TEXT NOT NULL,"
      " role TEXT NOT NULL,"
      " node TEXT NOT NULL,"
      " created BIGINT NOT NULL,"
      " revoked INTEGER NOT NULL CHECK (revoked IN (0, 1)))",
      "CREATE TABLE nodes ("
      " name TEXT PRIMARY KEY,"
      " body TEXT NOT NULL)",
      "CREATE TABLE queues ("
      " ordinal INTEGER PRIMARY KEY,"
      " name TEXT NOT NULL UNIQUE,"
      " parent TEXT NOT NULL,"
      " guaranteed_milli BIGINT NOT NULL,"
      " ceiling_milli BIGINT)",
      "CREATE TABLE usage_runs (" + IdColumn(dialect) +
          ","
          " job_id BIGINT NOT NULL,"
          " user_name TEXT NOT NULL,"
          " queue TEXT NOT NULL,"
          " gpu_milli BIGINT NOT NULL,"
          " start_time BIGINT NOT NULL,"
          " end_time BIGINT NOT NULL)",
      "CREATE INDEX usage_runs_by_start ON usage_runs (start_time)",
  };
}

// Version 2: tokens may expire (issue 27). The column is nullable, so
// tokens issued before it never expire, as they did; both databases add such
// a column without rewriting the table.
std::vector<std::string> Migration2() { return {"ALTER TABLE tokens ADD COLUMN expires BIGINT"}; }

// Version 3: queues are governed (issue 27): shares, per-user limits and
// submission rules, as JSON text (record_json.h). NULL: none, so queues
// stored before read as they did.
std::vector<std::string> Migration3() { return {"ALTER TABLE queues ADD COLUMN governance TEXT"}; }

// Version 4: what a run used, as its nodes measured it in the tasks'
// cgroups (issue 27). Nullable: runs before it, and runs on nodes without
// cgroups, were not measured.
std::vector<std::string> Migration4() {
  return {"ALTER TABLE usage_runs ADD COLUMN peak_memory_mib BIGINT",
          "ALTER TABLE usage_runs ADD COLUMN cpu_time_us BIGINT"};
}

// Version 5: the leader's lease (issue 32; store/leader_lease.h), one row.
// Only PostgreSQL uses it, but both schemas stay one.
std::vector<std::string> Migration5() {
  return {
      "CREATE TABLE leader ("
      " id INTEGER PRIMARY KEY CHECK (id = 1),"
      " epoch BIGINT NOT NULL,"
      " holder TEXT NOT NULL,"
      " url TEXT NOT NULL,"
      " expires_us BIGINT NOT NULL,"
      " last_transaction BIGINT NOT NULL)",
  };
}

// migrations[i] takes the schema from version i to i + 1.
std::vector<std::vector<std::string>> Migrations(SqlDialect dialect) {
  return {Migration1(dialect), Migration2(), Migration3(), Migration4(), Migration5()};
}

Result<int64_t> StoredVersion(SqlConnection& connection) {
  BERTH_ASSIGN_OR_RETURN(std::vector<SqlRow> rows,
                         connection.Exec("SELECT version FROM schema_version", {}));
  if (rows.empty()) return int64_t{0};
  if (rows.size() > 1) {
    return Internal("schema_version: expected one row, found " + std::to_string(rows.size()));
  }
  return CellInt64(rows[0], 0, "schema_version.version");
}

Status MigrateInTransaction(SqlConnection& connection, SqlDialect dialect) {
  if (dialect == SqlDialect::kPostgres) {
    // Several servers may open one database at once: one migrates, the
    // others wait here and then find the work done. (SQLite's BEGIN
    // IMMEDIATE already serialises.)
    BERTH_RETURN_IF_ERROR(connection.Exec("SELECT pg_advisory_xact_lock(7283461902)", {}).status());
  }
  BERTH_RETURN_IF_ERROR(
      connection.Exec("CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)", {})
          .status());
  BERTH_ASSIGN_OR_RETURN(const int64_t stored, StoredVersion(connection));
  if (stored > kSchemaVersion) {
    return FailedPrecondition("schema_version: the database is at version " +
                              std::to_string(stored) + ", newer than this binary's " +
                              std::to_string(kSchemaVersion) + "; upgrade Berth");
  }
  if (stored == kSchemaVersion) return Status::Ok();
  const std::vector<std::vector<std::string>> migrations = Migrations(dialect);
  for (int64_t version = stored; version < kSchemaVersion; ++version) {
    for (const std::string& statement : migrations[static_cast<size_t>(version)]) {
      Result<std::vector<SqlRow>> result = connection.Exec(statement, {});
      if (!result.ok()) {
        return Status(result.status().code(), "migration to schema version " +
                                                  std::to_string(version + 1) + ": " +
                                                  result.status().message());
      }
    }
  }
  BERTH_RETURN_IF_ERROR(connection.Exec("DELETE FROM schema_version", {}).status());
  return connection.Exec("INSERT INTO schema_version (version) VALUES ($1)", {kSchemaVersion})
      .status();
}

}  // namespace

std::string_view BeginWriteSql(SqlDialect dialect) {
  return dialect == SqlDialect::kSqlite ? "BEGIN IMMEDIATE" : "BEGIN";
}

Status MigrateSchema(SqlConnection& connection, SqlDialect dialect) {
  BERTH_RETURN_IF_ERROR(connection.Exec(BeginWriteSql(dialect), {}).status());
  Status status = MigrateInTransaction(connection, dialect);
  if (status.ok()) status = connection.Exec("COMMIT", {}).status();
  if (!status.ok()) (void)connection.Exec("ROLLBACK", {});
  return status;
}

}  // namespace berth::store
