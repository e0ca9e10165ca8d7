#include "store/leader_lease.h"

#include <string_view>
#include <utility>
#include <vector>

#include "store/postgres_store.h"
#include "store/schema.h"

namespace berth::store {
namespace {

// The database's clock, in microseconds since the epoch: the one clock
// every server on the database shares. clock_timestamp(), not now(): now()
// is the transaction's start.
#define BERTH_DB_NOW_US "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::BIGINT"

constexpr std::string_view kCreateRow =
    "INSERT INTO leader (id, epoch, holder, url, expires_us, last_transaction) "
    "VALUES (1, 0, '', '', 0, 0) ON CONFLICT (id) DO NOTHING";
constexpr std::string_view kAcquire =
    "UPDATE leader SET epoch = epoch + 1, holder = $1, url = $2, expires_us = " BERTH_DB_NOW_US
    " + $3, last_transaction = 0 WHERE id = 1 AND expires_us < " BERTH_DB_NOW_US " RETURNING epoch";
constexpr std::string_view kRenew = "UPDATE leader SET expires_us = " BERTH_DB_NOW_US
                                    " + $2 WHERE id = 1 AND epoch = $1 RETURNING epoch";
constexpr std::string_view kRelease =
    "UPDATE leader SET expires_us = 0 WHERE id = 1 AND epoch = $1";
constexpr std::string_view kCurrent =
    "SELECT epoch, holder, url, CASE WHEN expires_us > " BERTH_DB_NOW_US
    " THEN 1 ELSE 0 END FROM leader WHERE id = 1 AND epoch > 0";
constexpr std::string_view kClaim =
    "UPDATE leader SET last_transaction = $2 WHERE id = 1 AND epoch = $1 RETURNING epoch";
constexpr std::string_view kLastTransaction =
    "SELECT last_transaction FROM leader WHERE id = 1 AND epoch = $1";

#undef BERTH_DB_NOW_US

Status Fenced(int64_t epoch) {
  return FailedPrecondition(
      "fenced: another server took over the store (this server's lease, "
      "epoch " +
      std::to_string(epoch) + ", is gone); it writes nothing more");
}

}  // namespace

Result<std::unique_ptr<LeaderLease>> LeaderLease::Open(std::unique_ptr<SqlConnection> connection,
                                                       Options options) {
  BERTH_RETURN_IF_ERROR(MigrateSchema(*connection, SqlDialect::kPostgres));
  BERTH_RETURN_IF_ERROR(connection->Exec(kCreateRow, {}).status());
  return std::unique_ptr<LeaderLease>(new LeaderLease(std::move(connection), std::move(options)));
}

Result<std::unique_ptr<LeaderLease>> LeaderLease::Connect(const std::string& url, Options options) {
  BERTH_ASSIGN_OR_RETURN(std::unique_ptr<PostgresConnection> connection,
                         PostgresConnection::Connect(url));
  return Open(std::move(connection), std::move(options));
}

Result<SqlConnection*> LeaderLease::Connection() {
  if (connection_->broken()) {
    if (Status status = connection_->Reconnect(); !status.ok()) {
      return Unavailable("database connection lost: " + status.message());
    }
  }
  return connection_.get();
}

Result<bool> LeaderLease::TryAcquire() {
  std::lock_guard lock(mutex_);
  BERTH_ASSIGN_OR_RETURN(SqlConnection * db, Connection());
  BERTH_ASSIGN_OR_RETURN(std::vector<SqlRow> rows,
                         db->Exec(kAcquire, {options_.holder, options_.url,
                                             static_cast<int64_t>(options_.ttl.count()) * 1000}));
  if (rows.empty()) return false;
  BERTH_ASSIGN_OR_RETURN(epoch_, CellInt64(rows[0], 0, "leader.epoch"));
  return true;
}

Status LeaderLease::Renew() {
  std::lock_guard lock(mutex_);
  BERTH_ASSIGN_OR_RETURN(SqlConnection * db, Connection());
  BERTH_ASSIGN_OR_RETURN(
      std::vector<SqlRow> rows,
      db->Exec(kRenew, {epoch_, static_cast<int64_t>(options_.ttl.count()) * 1000}));
  if (rows.empty()) return Fenced(epoch_);
  return Status::Ok();
}

void LeaderLease::Release() {
  std::lock_guard lock(mutex_);
  Result<SqlConnection*> db = Connection();
  if (db.ok() && epoch_ > 0) (void)(*db)->Exec(kRelease, {epoch_});
}

Result<LeaderInfo> LeaderLease::Current() {
  std::lock_guard lock(mutex_);
  BERTH_ASSIGN_OR_RETURN(SqlConnection * db, Connection());
  BERTH_ASSIGN_OR_RETURN(std::vector<SqlRow> rows, db->Exec(kCurrent, {}));
  if (rows.empty()) return NotFound("no server has led this store yet");
  LeaderInfo info;
  BERTH_ASSIGN_OR_RETURN(info.epoch, CellInt64(rows[0], 0, "leader.epoch"));
  BERTH_ASSIGN_OR_RETURN(info.holder, CellText(rows[0], 1, "leader.holder"));
  BERTH_ASSIGN_OR_RETURN(info.url, CellText(rows[0], 2, "leader.url"));
  BERTH_ASSIGN_OR_RETURN(const int64_t live, CellInt64(rows[0], 3, "leader.live"));
  info.live = live == 1;
  return info;
}

int64_t LeaderLease::epoch() const {
  std::lock_guard lock(mutex_);
  return epoch_;
}

WriteFence LeaderLease::Fence() const {
  const int64_t epoch = this->epoch();
  return WriteFence{
      [epoch](SqlConnection& db, int64_t transaction) -> Status {
        BERTH_ASSIGN_OR_RETURN(std::vector<SqlRow> rows, db.Exec(kClaim, {epoch, transaction}));
        return rows.empty() ? Fenced(epoch) : Status::Ok();
      },
      [epoch](SqlConnection& db, int64_t transaction) -> Result<bool> {
        BERTH_ASSIGN_OR_RETURN(std::vector<SqlRow> rows, db.Exec(kLastTransaction, {epoch}));
        if (rows.empty()) return Fenced(epoch);
        BERTH_ASSIGN_OR_RETURN(const int64_t last,
                               CellInt64(rows[0], 0, "leader.last_transaction"));
        return last == transaction;
      }};
}

}  // namespace berth::store
