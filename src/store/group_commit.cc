#include "store/group_commit.h"

#include <exception>
#include <string>
#include <utility>

#include "common/ready_future.h"

namespace berth::store {
namespace {

constexpr std::string_view kSavepoint = "SAVEPOINT berth_write";
constexpr std::string_view kRelease = "RELEASE SAVEPOINT berth_write";
constexpr std::string_view kRollbackTo = "ROLLBACK TO SAVEPOINT berth_write";

}  // namespace

GroupCommitter::GroupCommitter(std::unique_ptr<SqlConnection> connection, SqlDialect dialect,
                               size_t max_batch)
    : connection_(std::move(connection)), dialect_(dialect), max_batch_(max_batch) {
  thread_ = std::thread([this] { Loop(); });
}

GroupCommitter::~GroupCommitter() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Status GroupCommitter::Run(Write write) { return Enqueue(std::move(write), false).get(); }

std::shared_future<Status> GroupCommitter::Queue(Write write) {
  return Enqueue(std::move(write), true);
}

std::shared_future<Status> GroupCommitter::Enqueue(Write write, bool must_succeed) {
  std::shared_future<Status> done;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return ReadyFuture(Unavailable("store: closing, the write was not made"));
    if (!poisoned_.ok()) return ReadyFuture(poisoned_);
    queue_.push_back(Pending{std::move(write), must_succeed, std::chrono::steady_clock::now(), {}});
    done = last_ = queue_.back().done.get_future().share();
  }
  wake_.notify_one();
  return done;
}

std::shared_future<Status> GroupCommitter::Barrier() {
  std::shared_future<Status> last;
  {
    std::lock_guard lock(mutex_);
    last = last_;
  }
  // Deferred: runs in the thread that waits for it.
  return std::async(std::launch::deferred,
                    [this, last] {
                      if (last.valid()) last.wait();
                      return poisoned();
                    })
      .share();
}

Status GroupCommitter::poisoned() const {
  std::lock_guard lock(mutex_);
  return poisoned_;
}

void GroupCommitter::SetObserver(BatchObserver observer) {
  std::lock_guard lock(mutex_);
  observer_ = std::move(observer);
}

size_t GroupCommitter::queued() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

void GroupCommitter::Loop() {
  while (true) {
    std::vector<Pending> batch;
    BatchObserver observer;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left to write
      while (!queue_.empty() && batch.size() < max_batch_) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      observer = observer_;
    }
    const auto began = std::chrono::steady_clock::now();
    std::vector<Status> statuses;
    if (Status poisoned = this->poisoned(); !poisoned.ok()) {
      statuses.assign(batch.size(), poisoned);
    } else {
      try {
        statuses = RunBatch(batch);
      } catch (const std::exception& e) {
        // Only allocation can throw here (writes are run under their own
        // catch); leave no transaction open for the next batch.
        (void)Exec("ROLLBACK");
        statuses.assign(batch.size(), Internal(std::string("store writer: ") + e.what()));
      }
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      if (batch[i].must_succeed && !statuses[i].ok()) {
        // Before any of this batch's callers hears: a Barrier that sees its
        // write settled must see the poison too.
        std::lock_guard lock(mutex_);
        if (poisoned_.ok()) {
          poisoned_ = Status(statuses[i].code(),
                             "store: a change the server had already applied could not be "
                             "written; restart the server to reload from the store: " +
                                 statuses[i].message());
        }
        break;
      }
    }
    if (observer) {
      observer(BatchTiming{batch.size(), began - batch.front().queued_at,
                           std::chrono::steady_clock::now() - began});
    }
    for (size_t i = 0; i < batch.size(); ++i) batch[i].done.set_value(std::move(statuses[i]));
  }
}

std::vector<Status> GroupCommitter::RunBatch(std::vector<Pending>& batch) {
  for (int attempt = 0;; ++attempt) {
    if (connection_->broken()) {
      if (Status status = connection_->Reconnect(); !status.ok()) {
        return std::vector<Status>(batch.size(),
                                   Unavailable("database connection lost: " + status.message()));
      }
    }
    Attempt result = TryBatch(batch);
    if (!result.lost_before_commit) return std::move(result.statuses);
    if (attempt == 1) {
      // Reconnected once and lost it again: the database is not there now.
      for (Status& status : result.statuses) {
        status = Unavailable("database connection lost: " + status.message());
      }
      return std::move(result.statuses);
    }
  }
}

GroupCommitter::Attempt GroupCommitter::TryBatch(std::vector<Pending>& batch) {
  Attempt out;
  out.statuses.assign(batch.size(), Status::Ok());
  // Fails the whole batch: the transaction is rolled back (or already gone).
  auto abort_batch = [&](const Status& cause) {
    out.lost_before_commit = connection_->broken();
    if (!out.lost_before_commit) (void)Exec("ROLLBACK");
    out.statuses.assign(batch.size(), cause);
    return std::move(out);
  };

  if (Status begin = Exec(BeginWriteSql(dialect_)); !begin.ok()) return abort_batch(begin);
  bool any_ok = false;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (Status savepoint = Exec(kSavepoint); !savepoint.ok()) return abort_batch(savepoint);
    Status status = RunOne(batch[i].write);
    if (connection_->broken()) {
      return abort_batch(status.ok() ? Unavailable("database connection lost") : status);
    }
    // Nothing of a batch commits without the write that must: later writes
    // may depend on it (the caller's memory already does).
    if (!status.ok() && batch[i].must_succeed) return abort_batch(status);
    // Keep this write, or undo it alone.
    Status settle = status.ok() ? Exec(kRelease) : Exec(kRollbackTo);
    if (settle.ok() && !status.ok()) settle = Exec(kRelease);
    if (!settle.ok()) return abort_batch(settle);
    any_ok = any_ok || status.ok();
    out.statuses[i] = std::move(status);
  }
  if (!any_ok) {
    (void)Exec("ROLLBACK");  // nothing to keep
    return out;
  }
  Status commit = Exec("COMMIT");
  if (commit.ok()) {
    commits_.fetch_add(1, std::memory_order_relaxed);
    return out;
  }
  if (connection_->broken()) {
    commit = Unavailable(
        "database connection lost during COMMIT; the write may or may not have been made "
        "(retry with the same idempotency key): " +
        commit.message());
  } else {
    (void)Exec("ROLLBACK");
  }
  for (Status& status : out.statuses) {
    if (status.ok()) status = commit;
  }
  return out;
}

Status GroupCommitter::RunOne(Write& write) {
  try {
    return write(*connection_);
  } catch (const std::exception& e) {
    return Internal(std::string("store write: ") + e.what());
  } catch (...) {
    return Internal("store write: unknown exception");
  }
}

Status GroupCommitter::Exec(std::string_view sql) { return connection_->Exec(sql, {}).status(); }

}  // namespace berth::store
