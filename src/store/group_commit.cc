#include "store/group_commit.h"

#include <algorithm>
#include <exception>
#include <string>
#include <utility>

#include "common/ready_future.h"

namespace berth::store {
namespace {

constexpr std::string_view kSavepoint = "SAVEPOINT berth_write";
constexpr std::string_view kReleaseSavepoint = "RELEASE SAVEPOINT berth_write";
constexpr std::string_view kRollbackTo = "ROLLBACK TO SAVEPOINT berth_write";

}  // namespace

GroupCommitter::GroupCommitter(std::unique_ptr<SqlConnection> connection, SqlDialect dialect,
                               Options options)
    : connection_(std::move(connection)), dialect_(dialect), options_(std::move(options)) {
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

Status GroupCommitter::Run(Write write) { return Enqueue(std::move(write), Kind::kPlain).get(); }

std::shared_future<Status> GroupCommitter::Queue(Write write) {
  return Enqueue(std::move(write), Kind::kMustSucceed);
}

std::shared_future<Status> GroupCommitter::Barrier() {
  {
    // Nothing queued or being written (the usual case, between batches):
    // settled already, without waking the writer.
    std::lock_guard lock(mutex_);
    if (queue_.empty() && !writing_) return ReadyFuture(poisoned_);
  }
  return Enqueue(nullptr, Kind::kBarrier);
}

std::shared_future<Status> GroupCommitter::Enqueue(Write write, Kind kind) {
  std::shared_future<Status> done;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return ReadyFuture(Unavailable("store: closing, the write was not made"));
    if (!poisoned_.ok()) return ReadyFuture(poisoned_);
    if (kind == Kind::kPlain && !outage_.ok()) return ReadyFuture(outage_);
    queue_.push_back(Pending{std::move(write), kind, std::chrono::steady_clock::now(), {}, false});
    done = queue_.back().done.get_future().share();
  }
  wake_.notify_one();
  return done;
}

Status GroupCommitter::poisoned() const {
  std::lock_guard lock(mutex_);
  return poisoned_;
}

Status GroupCommitter::outage() const {
  std::lock_guard lock(mutex_);
  return outage_;
}

void GroupCommitter::SetOutage(Status outage) {
  std::lock_guard lock(mutex_);
  outage_ = std::move(outage);
}

void GroupCommitter::SetObserver(BatchObserver observer) {
  std::lock_guard lock(mutex_);
  observer_ = std::move(observer);
}

size_t GroupCommitter::queued() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

bool GroupCommitter::RestUnlessStopping(std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  return !wake_.wait_for(lock, wait, [this] { return stopping_; });
}

void GroupCommitter::Loop() {
  // In an outage with nothing held, the writer still sees now and then
  // whether the database is back (barriers come and go meanwhile, and
  // touch no database).
  std::chrono::milliseconds probe = options_.first_retry;
  auto next_probe = std::chrono::steady_clock::now();
  while (true) {
    std::vector<Pending> batch;
    BatchObserver observer;
    {
      std::unique_lock lock(mutex_);
      auto ready = [this] { return stopping_ || !queue_.empty(); };
      if (outage_.ok()) {
        wake_.wait(lock, ready);
      } else {
        wake_.wait_until(lock, next_probe, ready);
        if (!stopping_ && std::chrono::steady_clock::now() >= next_probe) {
          lock.unlock();
          if (Connected().ok() && Exec("SELECT 1").ok()) {
            SetOutage(Status::Ok());
            probe = options_.first_retry;
          } else {
            probe = std::min(probe * 2, options_.last_retry);
          }
          next_probe = std::chrono::steady_clock::now() + probe;
          continue;
        }
      }
      if (queue_.empty()) {
        if (stopping_) return;  // and nothing left to write
        continue;
      }
      while (!queue_.empty() && batch.size() < options_.max_batch) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      writing_ = true;
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
      if (batch[i].kind == Kind::kMustSucceed && !statuses[i].ok()) {
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
    const Status poisoned = this->poisoned();
    size_t writes = 0;
    for (const Pending& pending : batch) writes += pending.kind == Kind::kBarrier ? 0 : 1;
    if (observer && writes > 0) {
      observer(BatchTiming{writes, began - batch.front().queued_at,
                           std::chrono::steady_clock::now() - began});
    }
    {
      std::lock_guard lock(mutex_);
      writing_ = false;
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      if (batch[i].settled) continue;
      batch[i].done.set_value(batch[i].kind == Kind::kBarrier ? poisoned : std::move(statuses[i]));
    }
  }
}

Status GroupCommitter::Connected() {
  if (!connection_->broken()) return Status::Ok();
  Status status = connection_->Reconnect();
  if (!status.ok()) return Unavailable("database connection lost: " + status.message());
  return status;
}

void GroupCommitter::FailPlainWrites(std::vector<Pending>& batch, const Status& why) {
  for (Pending& pending : batch) {
    if (pending.kind != Kind::kPlain || pending.settled) continue;
    pending.done.set_value(why);
    pending.settled = true;
  }
}

std::vector<Status> GroupCommitter::RunBatch(std::vector<Pending>& batch) {
  // Whether a write is still to be made (not a barrier, not failed early).
  auto waiting = [&batch] {
    return std::any_of(batch.begin(), batch.end(), [](const Pending& pending) {
      return pending.kind != Kind::kBarrier && !pending.settled;
    });
  };
  if (!waiting()) return std::vector<Status>(batch.size(), Status::Ok());
  std::chrono::milliseconds retry = options_.first_retry;
  // A transaction whose COMMIT was lost: the database says, once it is
  // back, whether it committed.
  std::optional<Attempt> unknown;
  for (int attempt = 0;; ++attempt) {
    Status link = Connected();
    if (link.ok() && unknown) {
      Result<bool> committed = options_.fence->committed(*connection_, unknown->transaction);
      if (committed.status().code() == StatusCode::kFailedPrecondition) {
        std::lock_guard lock(mutex_);  // fenced: nothing more of this writer lands
        if (poisoned_.ok()) poisoned_ = committed.status();
        return std::vector<Status>(batch.size(), committed.status());
      }
      if (committed.ok() && *committed) {
        SetOutage(Status::Ok());
        return std::move(unknown->if_committed);
      }
      if (committed.ok()) unknown.reset();  // rolled back: run it again
      link = committed.ok() ? Connected() : Unavailable(committed.status().message());
    }
    if (link.ok() && !unknown) {
      Attempt result = TryBatch(batch);
      if (result.outcome == Outcome::kSettled) {
        SetOutage(Status::Ok());
        return std::move(result.statuses);
      }
      if (result.outcome == Outcome::kCommitUnknown && !options_.fence) {
        return std::move(result.statuses);  // the callers decide (idempotency keys)
      }
      link = Unavailable("database connection lost: " + result.failure.message());
      if (result.outcome == Outcome::kCommitUnknown) unknown = std::move(result);
      // A link that broke once is reconnected at once; twice is an outage.
      if (attempt == 0) continue;
    }
    // The database is away: plain writes fail now, the rest wait for it.
    const Status outage = Unavailable(
        link.message() + " (the store is unavailable: changes are refused until it returns)");
    SetOutage(outage);
    FailPlainWrites(batch, unknown ? unknown->failure : outage);
    if (!waiting() && !unknown) return std::vector<Status>(batch.size(), outage);
    if (!RestUnlessStopping(retry)) {
      return std::vector<Status>(batch.size(), outage);  // the process is ending
    }
    retry = std::min(retry * 2, options_.last_retry);
  }
}

GroupCommitter::Attempt GroupCommitter::TryBatch(std::vector<Pending>& batch) {
  Attempt out;
  out.statuses.assign(batch.size(), Status::Ok());
  out.transaction = ++transactions_;
  // Fails the whole batch: the transaction is rolled back (or already gone).
  auto abort_batch = [&](const Status& cause) {
    out.failure = cause;
    if (connection_->broken()) out.outcome = Outcome::kLostBeforeCommit;
    if (out.outcome == Outcome::kSettled) (void)Exec("ROLLBACK");
    out.statuses.assign(batch.size(), cause);
    return std::move(out);
  };

  bool any_write = false;
  for (const Pending& pending : batch) any_write = any_write || pending.kind != Kind::kBarrier;
  if (!any_write) return out;
  if (Status begin = Exec(BeginWriteSql(dialect_)); !begin.ok()) return abort_batch(begin);
  if (options_.fence) {
    if (Status claim = options_.fence->claim(*connection_, out.transaction); !claim.ok()) {
      if (!connection_->broken()) {
        // Nothing this committer writes may land any more.
        std::lock_guard lock(mutex_);
        if (poisoned_.ok()) poisoned_ = claim;
      }
      return abort_batch(claim);
    }
  }
  bool any_ok = false;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (batch[i].settled || batch[i].kind == Kind::kBarrier) continue;
    if (Status savepoint = Exec(kSavepoint); !savepoint.ok()) return abort_batch(savepoint);
    Status status = RunOne(batch[i].write);
    if (connection_->broken()) {
      return abort_batch(status.ok() ? Unavailable("database connection lost") : status);
    }
    // Nothing of a batch commits without the write that must: later writes
    // may depend on it (the caller's memory already does).
    if (!status.ok() && batch[i].kind == Kind::kMustSucceed) return abort_batch(status);
    // Keep this write, or undo it alone.
    Status settle = status.ok() ? Exec(kReleaseSavepoint) : Exec(kRollbackTo);
    if (settle.ok() && !status.ok()) settle = Exec(kReleaseSavepoint);
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
    out.outcome = Outcome::kCommitUnknown;
    out.if_committed = out.statuses;
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
  out.failure = commit;
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
