// The Store: everything the control plane must not lose. Two
// implementations pass one shared test suite (store_test.cc): SQLite (the
// default, one file in the data dir, WAL, synchronous=FULL) and PostgreSQL
// (libpq), for production and several server replicas.
//
// Contract:
// - Every call that returns OK has made its change durable (fsync'd on
//   SQLite, committed on PostgreSQL). Writes use group commit: calls
//   arriving together share one transaction and one flush, each still all
//   or nothing on its own (store/group_commit.h).
// - A read sees every write that returned OK before the read began, from any
//   thread (and from any Store on the same database).
// - Thread-safe: any thread may call any method.
// - Expected failures are a Status (NotFound, FailedPrecondition for a stale
//   version, AlreadyExists for a unique key taken, Unavailable for a database
//   that cannot be reached, Internal for a bug or a corrupted row); no
//   exception leaves a Store. A write that failed wrote nothing, except that
//   Unavailable after a connection lost during COMMIT (PostgreSQL) means the
//   outcome is unknown: retry with the same idempotency key.
// - An outage of the database loses no queued write (QueueJobChanges): they
//   wait for it and are written in order when it returns; other writes fail
//   with Unavailable meanwhile (store/group_commit.h).
#pragma once

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "core/quota.h"
#include "store/records.h"

namespace berth::store {

// What one transaction of the store's writer cost, for metrics: where a
// write's wait for durability goes when it is not the disk's flush.
struct BatchTiming {
  size_t writes = 0;  // writes that shared the transaction
  // From the hand-over of the batch's oldest write until the batch began
  // (the writer was busy with the previous batch, or waiting for a CPU).
  std::chrono::steady_clock::duration waited{};
  // The transaction: BEGIN, the writes, COMMIT (the flush).
  std::chrono::steady_clock::duration took{};
};
using BatchObserver = std::function<void(const BatchTiming&)>;

class Store {
 public:
  virtual ~Store() = default;

  // Assigns ids (ascending, never reused) and inserts the jobs atomically: an
  // array submission is several jobs. With a non-empty idempotency key that
  // `user` already used, inserts nothing and returns the ids of that earlier
  // submission (whatever `jobs` holds now), also when the two calls race.
  // Records are stored with their id, version 1 and `user` as their user; in
  // a submission of several jobs, every job after the first gets the first's
  // id as its array_parent. InvalidArgument when `jobs` is empty.
  virtual Result<std::vector<core::JobId>> SubmitJobs(const std::string& user,
                                                      const std::string& idempotency_key,
                                                      std::vector<JobRecord> jobs) = 0;
  virtual Result<JobRecord> GetJob(core::JobId id) = 0;  // NotFound naming the id
  // The highest id assigned so far (0 for none): every later job's is higher.
  virtual Result<core::JobId> LastJobId() = 0;
  // Jobs matching every set filter, ascending id, at most min(limit, 1000);
  // InvalidArgument for a limit below 1.
  virtual Result<std::vector<JobRecord>> ListJobs(const JobFilter& filter) = 0;
  // Writes changed jobs in one transaction. Each record's version must equal
  // the stored one (else FailedPrecondition naming the job, and nothing is
  // written; a job listed twice is stale the second time); stored versions
  // are then bumped by one. NotFound for a job that does not exist.
  virtual Status UpdateJobs(const std::vector<JobRecord>& jobs) = 0;
  // For the server's controller, which applies a change in memory first and
  // must not wait for the flush under its lock: queues the same update as
  // UpdateJobs, together with finished runs' usage, in one write, and
  // returns at once. The future is ready when it is durable (OK) or failed.
  // Writes settle in the order queued. Such a write must succeed: if one
  // fails, the store fails every later write with that error until it is
  // reopened (store/group_commit.h), and write_failure() reports it.
  virtual std::shared_future<Status> QueueJobChanges(std::vector<JobRecord> jobs,
                                                     std::vector<UsageRecord> usage) = 0;
  // Ready once every write queued before the call is settled: OK, or
  // write_failure(). What was read before the call is then durable.
  virtual std::shared_future<Status> Barrier() = 0;
  // OK until a queued write failed; then that failure, for good.
  virtual Status write_failure() const = 0;
  // OK, or Unavailable while the database cannot be reached: writes are
  // then refused (queued ones wait for it) and reads may fail.
  virtual Status write_outage() const = 0;

  // Inserts or replaces by id; AlreadyExists when another token has the hash.
  virtual Status PutToken(const TokenRecord& token) = 0;
  virtual Result<TokenRecord> FindTokenByHash(const std::string& hash) = 0;  // or NotFound
  virtual Result<std::vector<TokenRecord>> ListTokens() = 0;                 // by id

  virtual Status PutNode(const NodeRecord& node) = 0;       // insert or replace by name
  virtual Result<std::vector<NodeRecord>> ListNodes() = 0;  // by name

  // Replaces all, keeping their order; AlreadyExists (and nothing changed)
  // when two share a name. Validating the tree is core::QuotaTree::Make's job.
  virtual Status PutQueues(const std::vector<core::QueueSpec>& queues) = 0;
  virtual Result<std::vector<core::QueueSpec>> ListQueues() = 0;  // in the order put

  // Runs that overlap [from, to) (start < to and end > from), by start time.
  // (Runs are written with their job's final record: QueueJobChanges.)
  virtual Result<std::vector<UsageRecord>> ListUsage(core::Time from, core::Time to) = 0;

  // Calls `observer` after each transaction of the writer, on its thread and
  // before the transaction's callers hear, so it must be quick. Replaces any
  // earlier observer.
  virtual void ObserveWriteBatches(BatchObserver observer) = 0;
  // Transactions this Store has committed so far (for tests of group commit).
  virtual int64_t commits() const = 0;
};

// Opens (creating when missing) a SQLite store at `path`.
Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path);
// Connects to PostgreSQL (a libpq connection string or URL) and creates the
// schema when missing.
Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& url);

}  // namespace berth::store
