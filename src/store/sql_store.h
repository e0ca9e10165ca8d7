// SqlStore: the Store (store.h) written once over SqlConnection, so SQLite
// and PostgreSQL run the same queries on the same schema (schema.h) and pass
// the same suite. Each driver (sqlite_store.h, postgres_store.h) supplies its
// connections and its dialect.
//
// Writes all go through one GroupCommitter (group_commit.h): one writer
// connection, concurrent writes share a transaction, each write all-or-nothing
// inside its own savepoint. Reads borrow a connection from a small pool and
// see every write that has returned OK. A read on a connection found broken
// reconnects once and retries, then answers Unavailable.
//
// Thread-safe. No exception leaves it: failures are a Status.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/group_commit.h"
#include "store/schema.h"
#include "store/sql_connection.h"
#include "store/store.h"

namespace berth::store {

struct SqlStoreOptions {
  SqlDialect dialect = SqlDialect::kSqlite;
  // Opens one connection; called for each pooled reader, and for the writer
  // unless connect_writer is set.
  std::function<Result<std::unique_ptr<SqlConnection>>()> connect;
  std::function<Result<std::unique_ptr<SqlConnection>>()> connect_writer;
  // Readers kept open at most; a reader beyond this waits for one.
  size_t max_readers = 4;
  // The writer's: its fence (a leader's lease) and its pace in an outage.
  GroupCommitter::Options writer;
};

class SqlStore final : public Store {
 public:
  // Connects the writer, creates or migrates the schema, starts the writer.
  static Result<std::unique_ptr<Store>> Open(SqlStoreOptions options);
  ~SqlStore() override;

  Result<std::vector<core::JobId>> SubmitJobs(const std::string& user,
                                              const std::string& idempotency_key,
                                              std::vector<JobRecord> jobs) override;
  Result<JobRecord> GetJob(core::JobId id) override;
  Result<core::JobId> LastJobId() override;
  Result<std::vector<JobRecord>> ListJobs(const JobFilter& filter) override;
  Status UpdateJobs(const std::vector<JobRecord>& jobs) override;
  std::shared_future<Status> QueueJobChanges(std::vector<JobRecord> jobs,
                                             std::vector<UsageRecord> usage) override;
  std::shared_future<Status> Barrier() override { return writer_->Barrier(); }
  Status write_failure() const override { return writer_->poisoned(); }
  Status write_outage() const override { return writer_->outage(); }

  Status PutToken(const TokenRecord& token) override;
  Result<TokenRecord> FindTokenByHash(const std::string& hash) override;
  Result<std::vector<TokenRecord>> ListTokens() override;

  Status PutNode(const NodeRecord& node) override;
  Result<std::vector<NodeRecord>> ListNodes() override;

  Status PutQueues(const std::vector<core::QueueSpec>& queues) override;
  Result<std::vector<core::QueueSpec>> ListQueues() override;

  Result<std::vector<UsageRecord>> ListUsage(core::Time from, core::Time to) override;

  void ObserveWriteBatches(BatchObserver observer) override {
    writer_->SetObserver(std::move(observer));
  }
  int64_t commits() const override { return writer_->commits(); }

 private:
  using ReadFn = std::function<Status(SqlConnection&)>;

  SqlStore(SqlStoreOptions options, std::unique_ptr<SqlConnection> writer);

  // Runs `read` on a pooled connection (reconnecting once if it is broken).
  Status Read(const ReadFn& read);
  Result<std::unique_ptr<SqlConnection>> Borrow();
  void GiveBack(std::unique_ptr<SqlConnection> connection);

  const SqlStoreOptions options_;

  std::mutex pool_mutex_;
  std::condition_variable pool_returned_;
  std::vector<std::unique_ptr<SqlConnection>> idle_;  // guarded by pool_mutex_
  size_t open_readers_ = 0;                           // guarded by pool_mutex_

  std::unique_ptr<GroupCommitter> writer_;  // last: its thread stops first
};

}  // namespace berth::store
