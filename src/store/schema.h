// The store's schema and its migrations, for both databases.
//
// The schema is a numbered list of migrations; `schema_version` holds the
// number applied. Opening a store applies the missing ones in one
// transaction (a fresh database gets them all), so a later change is one
// more entry at the end of the list, never an edit of an old one. A database
// newer than this binary is refused rather than guessed at.
//
// Tables (version 4):
//   jobs          id (ascending, never reused), user_name, queue, state,
//                 submit_time (us), idempotency_key, array_parent, version:
//                 the columns that are queried; body: the rest of the
//                 JobRecord as JSON text (record_json.h)
//   submissions   (user_name, idempotency_key) primary key: the
//                 idempotency guard; its jobs carry the same key
//   tokens        id, hash (unique), user_name, role, node, created, revoked,
//                 expires (us; NULL: never; added in version 2)
//   nodes         name, body (the NodeRecord as JSON text)
//   queues        ordinal (the order given), name (unique), parent,
//                 guaranteed_milli, ceiling_milli (NULL: none), governance
//                 (JSON text: shares, limits, rules; NULL: none; version 3)
//   usage_runs    id, job_id, user_name, queue, gpu_milli, start_time, end_time,
//                 peak_memory_mib, cpu_time_us (NULL: not measured; added in
//                 version 4)
#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"
#include "store/sql_connection.h"

namespace berth::store {

enum class SqlDialect { kSqlite, kPostgres };

inline constexpr int64_t kSchemaVersion = 5;

// The statement that opens a write transaction: SQLite takes the write lock
// up front (BEGIN IMMEDIATE), so a transaction never fails half-way on a
// lock upgrade.
std::string_view BeginWriteSql(SqlDialect dialect);

// Creates the schema when missing and applies missing migrations, in one
// transaction on `connection`. FailedPrecondition when the database's schema
// is newer than kSchemaVersion.
Status MigrateSchema(SqlConnection& connection, SqlDialect dialect);

}  // namespace berth::store
