// The SQLite side of the Store: a SqlConnection over one database file, and
// OpenSqliteStore (declared in store.h) that runs SqlStore on it.
//
// Every connection sets journal_mode=WAL (readers never block the writer),
// synchronous=FULL (a commit returns after the WAL is fsync'd: that is what
// makes an OK durable), foreign_keys=ON, and a busy timeout, so a second
// process on the same file waits for the write lock instead of failing.
// Prepared statements are cached per connection. The store's writer opens
// its connection with OpenWriter: its WAL is checkpointed by a thread of its
// own (wal_checkpointer.h) instead of inside its commits.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/sql_connection.h"
#include "store/wal_checkpointer.h"

struct sqlite3;
struct sqlite3_stmt;

namespace berth::store {

class SqliteConnection final : public SqlConnection {
 public:
  // How long a statement waits for another connection's write lock before
  // it fails with Unavailable.
  static constexpr int kBusyTimeoutMs = 10'000;

  // Opens (creating when missing) the database at `path` and sets the
  // pragmas above. Unavailable when the file cannot be opened.
  static Result<std::unique_ptr<SqliteConnection>> Open(const std::string& path);
  // Open, for the one connection that writes: the WAL it grows is
  // checkpointed by a WalCheckpointer instead of by its commits.
  static Result<std::unique_ptr<SqliteConnection>> OpenWriter(const std::string& path);
  ~SqliteConnection() override;
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  Result<std::vector<SqlRow>> Exec(std::string_view sql,
                                   const std::vector<SqlValue>& params) override;
  // A file does not go away like a server: never broken.
  bool broken() const override { return false; }
  Status Reconnect() override { return Status::Ok(); }
  // The writer's checkpointer (OpenWriter); null for the others.
  const WalCheckpointer* checkpointer() const { return checkpointer_.get(); }

 private:
  explicit SqliteConnection(sqlite3* db) : db_(db) {}
  Result<sqlite3_stmt*> Prepare(std::string_view sql);
  Status Error(int code, std::string_view context) const;

  sqlite3* db_;
  std::map<std::string, sqlite3_stmt*, std::less<>> statements_;
  std::unique_ptr<WalCheckpointer> checkpointer_;  // the writer's only
};

}  // namespace berth::store
