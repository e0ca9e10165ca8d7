// GroupCommitter: the store's single writer. Callers on any thread hand it a
// write (a function that runs statements on the writer's connection) and
// block until that write is durable; one thread commits whatever writes are
// queued in one transaction, so concurrent callers share one flush (one WAL
// fsync on SQLite, one commit record on PostgreSQL).
//
//   caller A --Run(w1)--+                       +--> A: Status of w1
//   caller B --Run(w2)--+--> queue --> writer --+--> B: Status of w2
//   caller C --Run(w3)--+    BEGIN; SAVEPOINT; w1; RELEASE; ... w3; COMMIT
//
// Batching needs no timer: while one transaction commits, the next callers
// queue up, and the writer takes all of them at once when it comes back.
//
// Each write runs inside its own savepoint, so a write that fails (a stale
// version, a unique-key collision) is rolled back alone and the others still
// commit: every caller gets all-or-nothing for its own write. If the COMMIT
// fails, every write of the batch fails with that error.
//
// Lost connections (PostgreSQL): a batch whose connection breaks before
// COMMIT is sent has certainly rolled back, so the writer reconnects and runs
// it once more. A connection lost during COMMIT leaves the outcome unknown:
// with a fence (below) the writer asks the database, once it is back,
// whether that transaction committed; without one those writes fail with
// Unavailable without a retry (callers retry with their idempotency key).
//
// Outages: when the database stays away, the writer is in an outage. Plain
// writes (Run) then fail at once with Unavailable (the API answers 503);
// queued writes (Queue), which must succeed, are held and retried with
// backoff until the database returns, in order, so an outage loses nothing
// the caller already applied. While nothing is held, the writer still
// probes the database now and then, so the outage ends by itself.
//
// Fencing (several servers on one database): a fence's claim runs first in
// every transaction; once it fails (another server leads), the committer
// fails this and every later write (poisoned), so a server that lost its
// lease writes nothing more.
//
// Queued writes (Queue): a caller that has already applied a change in its
// memory hands the write over under its own lock, so that writes reach the
// database in the order of its changes, and waits for the flush after
// releasing that lock. Such a write must succeed: the caller cannot take
// its change back. If one fails, its whole batch is rolled back and the
// committer fails every later write with that error (poisoned): the
// database then holds a consistent prefix of the caller's changes, and only
// a restart, which reloads from it, can agree with it again.
//
// Thread-safe. A write function must be safe to run twice (it may be rerun
// after a lost connection): it resets what it reports before writing it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "common/status.h"
#include "store/schema.h"
#include "store/sql_connection.h"
#include "store/store.h"

namespace berth::store {

// Ties every write transaction to the right to write (a leader's lease: see
// store/leader_lease.h). Transactions are numbered 1, 2, ... per committer.
struct WriteFence {
  // Runs first in each transaction: records `transaction` as the last one
  // this writer began, or fails with FailedPrecondition when it may no
  // longer write.
  std::function<Status(SqlConnection&, int64_t transaction)> claim;
  // After a link lost during COMMIT, on a new connection: whether that
  // transaction committed.
  std::function<Result<bool>(SqlConnection&, int64_t transaction)> committed;
};

class GroupCommitter {
 public:
  using Write = std::function<Status(SqlConnection&)>;

  struct Options {
    // At most this many writes share one transaction, which bounds how long
    // the first waits.
    size_t max_batch = 512;
    std::optional<WriteFence> fence;
    // The wait between tries while the database is away: doubling from the
    // first to the last.
    std::chrono::milliseconds first_retry{100};
    std::chrono::milliseconds last_retry{2000};
  };

  // Starts the writer thread, which owns `connection`.
  GroupCommitter(std::unique_ptr<SqlConnection> connection, SqlDialect dialect, Options options);
  GroupCommitter(std::unique_ptr<SqlConnection> connection, SqlDialect dialect)
      : GroupCommitter(std::move(connection), dialect, Options{}) {}
  // Runs what is already queued, then stops the thread.
  ~GroupCommitter();
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  // Queues `write` and returns its Status once its transaction committed (OK:
  // durable) or failed.
  Status Run(Write write);
  // Queues a write that must succeed (above) and returns at once; the future
  // is ready when its transaction committed or failed. Writes settle in the
  // order they were queued.
  std::shared_future<Status> Queue(Write write);
  // Ready once every write queued before the call has settled: OK unless a
  // queued write failed (then that failure, as poisoned() reports it).
  // During an outage it waits for the held writes (wait_for bounds it).
  std::shared_future<Status> Barrier();
  // OK until a queued write failed; then that failure, for good.
  Status poisoned() const;
  // OK, or Unavailable saying why the database cannot be reached now.
  Status outage() const;

  // Calls `observer` on the writer's thread after each batch, before its
  // callers hear (so it must be quick); replaces any earlier observer.
  void SetObserver(BatchObserver observer);

  // Transactions committed so far.
  int64_t commits() const { return commits_.load(std::memory_order_relaxed); }
  // Writes waiting for the writer (not counting the batch it is running):
  // a gauge for metrics, and how tests know callers have queued up.
  size_t queued() const;

 private:
  enum class Kind {
    kPlain,        // Run: may fail
    kMustSucceed,  // Queue
    kBarrier,      // Barrier: writes nothing, settles with poisoned()
  };
  struct Pending {
    Write write;
    Kind kind = Kind::kPlain;
    std::chrono::steady_clock::time_point queued_at;
    std::promise<Status> done;
    bool settled = false;  // its promise is already set (failed in an outage)
  };
  std::shared_future<Status> Enqueue(Write write, Kind kind);

  enum class Outcome {
    kSettled,           // committed, or rolled back for a reason of its own
    kLostBeforeCommit,  // rolled back for sure: run it again
    kCommitUnknown,     // the link broke during COMMIT
  };
  struct Attempt {
    std::vector<Status> statuses;  // one per write
    Outcome outcome = Outcome::kSettled;
    Status failure;           // why, unless settled
    int64_t transaction = 0;  // its number, for the fence
    // kCommitUnknown: what each write gets if the transaction committed.
    std::vector<Status> if_committed;
  };

  void Loop();
  // Runs `batch` until it settles: retried after a lost link, held through
  // an outage. A Status per write (those settled early are skipped).
  std::vector<Status> RunBatch(std::vector<Pending>& batch);
  Attempt TryBatch(std::vector<Pending>& batch);
  // Fails the plain writes of `batch` now (an outage), marking them settled.
  void FailPlainWrites(std::vector<Pending>& batch, const Status& why);
  void SetOutage(Status outage);
  // Sleeps `wait` unless the committer is stopping; false when it is.
  bool RestUnlessStopping(std::chrono::milliseconds wait);
  // Reconnects when the link is broken.
  Status Connected();
  Status RunOne(Write& write);
  Status Exec(std::string_view sql);

  const std::unique_ptr<SqlConnection> connection_;
  const SqlDialect dialect_;
  const Options options_;
  std::atomic<int64_t> commits_{0};
  int64_t transactions_ = 0;  // the writer thread's only

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Pending> queue_;       // guarded by mutex_
  bool stopping_ = false;           // guarded by mutex_
  bool writing_ = false;            // a batch taken and not yet settled; guarded by mutex_
  Status poisoned_ = Status::Ok();  // guarded by mutex_
  Status outage_ = Status::Ok();    // guarded by mutex_
  BatchObserver observer_;          // guarded by mutex_
  std::thread thread_;              // last: started once everything above exists
};

}  // namespace berth::store
