// The PostgreSQL side of the Store: a SqlConnection over libpq, and
// OpenPostgresStore (declared in store.h) that runs SqlStore on it.
//
// Statements go out with PQexecParams: values are always parameters, sent as
// text for the server to type. A connection whose server went away (restart,
// failover, a terminated backend) reports broken(); SqlStore then reconnects
// once and retries what is safe to retry (group_commit.h), else the call
// fails with Unavailable.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/group_commit.h"
#include "store/sql_connection.h"

struct pg_conn;

namespace berth::store {

class PostgresConnection final : public SqlConnection {
 public:
  // Seconds to wait for the server when connecting, unless `url` says.
  static constexpr int kConnectTimeoutS = 10;

  // Connects with a libpq connection string or URL. Unavailable when the
  // server cannot be reached or refuses the login.
  static Result<std::unique_ptr<PostgresConnection>> Connect(const std::string& url);
  ~PostgresConnection() override;
  PostgresConnection(const PostgresConnection&) = delete;
  PostgresConnection& operator=(const PostgresConnection&) = delete;

  Result<std::vector<SqlRow>> Exec(std::string_view sql,
                                   const std::vector<SqlValue>& params) override;
  bool broken() const override;
  Status Reconnect() override;

 private:
  explicit PostgresConnection(pg_conn* connection) : connection_(connection) {}

  pg_conn* connection_;
};

// OpenPostgresStore (store.h) with the writer's options (a fence, the pace
// of its retries in an outage).
Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& url,
                                                 GroupCommitter::Options writer);

}  // namespace berth::store
