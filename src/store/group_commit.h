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
// it once more, then gives up with Unavailable. A connection lost during
// COMMIT leaves the outcome unknown; those writes fail with Unavailable
// without a retry (callers retry with their idempotency key).
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
#include <string_view>
#include <thread>
#include <vector>

#include "common/status.h"
#include "store/schema.h"
#include "store/sql_connection.h"
#include "store/store.h"

namespace berth::store {

class GroupCommitter {
 public:
  using Write = std::function<Status(SqlConnection&)>;

  // Starts the writer thread, which owns `connection`. At most `max_batch`
  // writes share one transaction, which bounds how long the first waits.
  GroupCommitter(std::unique_ptr<SqlConnection> connection, SqlDialect dialect,
                 size_t max_batch = 512);
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
  std::shared_future<Status> Barrier();
  // OK until a queued write failed; then that failure, for good.
  Status poisoned() const;

  // Calls `observer` on the writer's thread after each batch, before its
  // callers hear (so it must be quick); replaces any earlier observer.
  void SetObserver(BatchObserver observer);

  // Transactions committed so far.
  int64_t commits() const { return commits_.load(std::memory_order_relaxed); }
  // Writes waiting for the writer (not counting the batch it is running):
  // a gauge for metrics, and how tests know callers have queued up.
  size_t queued() const;

 private:
  struct Pending {
    Write write;
    bool must_succeed = false;
    std::chrono::steady_clock::time_point queued_at;
    std::promise<Status> done;
  };
  std::shared_future<Status> Enqueue(Write write, bool must_succeed);

  struct Attempt {
    std::vector<Status> statuses;  // one per write
    bool lost_before_commit = false;
  };

  void Loop();
  // One transaction over `batch` (two when the connection broke before
  // COMMIT); a Status per write.
  std::vector<Status> RunBatch(std::vector<Pending>& batch);
  Attempt TryBatch(std::vector<Pending>& batch);
  Status RunOne(Write& write);
  Status Exec(std::string_view sql);

  const std::unique_ptr<SqlConnection> connection_;
  const SqlDialect dialect_;
  const size_t max_batch_;
  std::atomic<int64_t> commits_{0};

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Pending> queue_;  // guarded by mutex_
  bool stopping_ = false;      // guarded by mutex_
  // The last write queued (a Barrier waits for it); guarded by mutex_.
  std::shared_future<Status> last_;
  Status poisoned_ = Status::Ok();  // guarded by mutex_
  BatchObserver observer_;          // guarded by mutex_
  std::thread thread_;              // last: started once everything above exists
};

}  // namespace berth::store
