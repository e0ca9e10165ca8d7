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
// Thread-safe. A write function must be safe to run twice (it may be rerun
// after a lost connection): it resets what it reports before writing it.
#pragma once

#include <atomic>
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

  // Transactions committed so far.
  int64_t commits() const { return commits_.load(std::memory_order_relaxed); }
  // Writes waiting for the writer (not counting the batch it is running):
  // a gauge for metrics, and how tests know callers have queued up.
  size_t queued() const;

 private:
  struct Pending {
    Write write;
    std::promise<Status> done;
  };

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
  std::thread thread_;         // last: started once everything above exists
};

}  // namespace berth::store
