// GroupCommitter's fault paths, through a fake connection: the typed store
// suite (store_test.cc) shows batching on real databases; here a connection
// that fails on cue shows what each caller gets when a write, a COMMIT or the
// link itself fails.
#include "store/group_commit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace berth::store {
namespace {

struct FakeDatabase {
  std::mutex mutex;
  std::vector<std::string> log;  // every statement, in order
  bool broken = false;
  bool reconnect_fails = false;
  int reconnects = 0;
  // Decides each statement's outcome (may set `broken`); OK by default.
  std::function<Status(const std::string&)> on_exec;

  std::vector<std::string> Log() {
    std::lock_guard lock(mutex);
    return log;
  }
  long Count(const std::string& statement) {
    std::vector<std::string> all = Log();
    return std::count(all.begin(), all.end(), statement);
  }
};

class FakeConnection final : public SqlConnection {
 public:
  explicit FakeConnection(std::shared_ptr<FakeDatabase> db) : db_(std::move(db)) {}

  Result<std::vector<SqlRow>> Exec(std::string_view sql,
                                   const std::vector<SqlValue>& /*params*/) override {
    std::lock_guard lock(db_->mutex);
    const std::string statement(sql);
    db_->log.push_back(statement);
    if (db_->broken) return Unavailable("fake: no connection to the server");
    if (db_->on_exec) BERTH_RETURN_IF_ERROR(db_->on_exec(statement));
    return std::vector<SqlRow>{};
  }
  bool broken() const override {
    std::lock_guard lock(db_->mutex);
    return db_->broken;
  }
  Status Reconnect() override {
    std::lock_guard lock(db_->mutex);
    ++db_->reconnects;
    if (db_->reconnect_fails) return Unavailable("fake: connection refused");
    db_->broken = false;
    return Status::Ok();
  }

 private:
  std::shared_ptr<FakeDatabase> db_;
};

GroupCommitter::Write Writes(std::string statement) {
  return [statement](SqlConnection& db) { return db.Exec(statement, {}).status(); };
}

// Holds the committer's writer inside a transaction until Release().
class HeldWriter {
 public:
  explicit HeldWriter(GroupCommitter& committer) {
    holder_ = std::thread([this, &committer, released = release_.get_future().share()] {
      (void)committer.Run([&](SqlConnection&) {
        entered_.set_value();
        released.wait();
        return Status::Ok();
      });
    });
    entered_.get_future().wait();
  }
  ~HeldWriter() { Release(); }
  void Release() {
    if (!holder_.joinable()) return;
    release_.set_value();
    holder_.join();
  }

 private:
  std::promise<void> entered_;
  std::promise<void> release_;
  std::thread holder_;
};

// Outages in milliseconds, not seconds.
GroupCommitter::Options FastRetries() {
  GroupCommitter::Options options;
  options.first_retry = std::chrono::milliseconds(1);
  options.last_retry = std::chrono::milliseconds(5);
  return options;
}

class GroupCommitTest : public ::testing::Test {
 protected:
  GroupCommitTest()
      : committer_(std::make_unique<FakeConnection>(db_), SqlDialect::kPostgres, FastRetries()) {}

  // Runs `writes` so that they share one transaction: a first write holds the
  // writer until all of them have queued behind it. Returns their Statuses.
  std::vector<Status> RunInOneBatch(std::vector<GroupCommitter::Write> writes) {
    HeldWriter held(committer_);
    std::vector<Status> statuses(writes.size());
    std::vector<std::thread> callers;
    for (size_t i = 0; i < writes.size(); ++i) {
      callers.emplace_back([&, i] { statuses[i] = committer_.Run(writes[i]); });
    }
    while (committer_.queued() < writes.size()) std::this_thread::yield();
    held.Release();
    for (std::thread& caller : callers) caller.join();
    return statuses;
  }

  std::shared_ptr<FakeDatabase> db_ = std::make_shared<FakeDatabase>();
  GroupCommitter committer_;
};

TEST_F(GroupCommitTest, QueuedWritesShareOneTransaction) {
  std::vector<Status> statuses =
      RunInOneBatch({Writes("write a"), Writes("write b"), Writes("write c"), Writes("write d")});
  for (const Status& status : statuses) EXPECT_TRUE(status.ok()) << status.ToString();
  // The holder's transaction, then one for all four.
  EXPECT_EQ(committer_.commits(), 2);
  EXPECT_EQ(db_->Count("BEGIN"), 2);
  EXPECT_EQ(db_->Count("COMMIT"), 2);
  EXPECT_EQ(db_->Count("SAVEPOINT berth_write"), 5);
}

TEST_F(GroupCommitTest, TheObserverHearsEachTransactionsSizeWaitAndLength) {
  std::mutex mutex;
  std::vector<BatchTiming> timings;
  committer_.SetObserver([&](const BatchTiming& timing) {
    std::lock_guard lock(mutex);
    timings.push_back(timing);
  });
  constexpr auto kHeld = std::chrono::milliseconds(20);
  {
    HeldWriter held(committer_);
    for (const char* write : {"write a", "write b", "write c"})
      (void)committer_.Queue(Writes(write));
    std::this_thread::sleep_for(kHeld);
  }
  // The observer is called before a transaction's callers hear.
  ASSERT_TRUE(committer_.Barrier().get().ok());
  std::lock_guard lock(mutex);
  ASSERT_EQ(timings.size(), 2u);
  EXPECT_EQ(timings[0].writes, 1u);  // the holder's, held open
  EXPECT_GE(timings[0].took, kHeld);
  EXPECT_EQ(timings[1].writes, 3u);  // queued behind it
  EXPECT_GE(timings[1].waited, kHeld);
}

TEST_F(GroupCommitTest, AFailedWriteIsRolledBackAloneAndTheOthersCommit) {
  std::vector<Status> statuses =
      RunInOneBatch({Writes("write a"),
                     [](SqlConnection& db) {
                       (void)db.Exec("write stale", {});
                       return FailedPrecondition("job 7: version 1 is stale");
                     },
                     Writes("write c")});
  EXPECT_TRUE(statuses[0].ok());
  EXPECT_EQ(statuses[1].code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(statuses[2].ok());
  EXPECT_EQ(committer_.commits(), 2);
  const std::vector<std::string> log = db_->Log();
  auto stale = std::find(log.begin(), log.end(), "write stale");
  ASSERT_NE(stale, log.end());
  ASSERT_LT(stale + 2, log.end());
  EXPECT_EQ(*(stale + 1), "ROLLBACK TO SAVEPOINT berth_write");
  EXPECT_EQ(*(stale + 2), "RELEASE SAVEPOINT berth_write");
}

TEST_F(GroupCommitTest, QueuedWritesSettleInOrderAndABarrierWaitsForThem) {
  HeldWriter held(committer_);
  std::shared_future<Status> first = committer_.Queue(Writes("write 1"));
  std::shared_future<Status> second = committer_.Queue(Writes("write 2"));
  std::shared_future<Status> barrier = committer_.Barrier();
  // Queue returned while the writer was busy elsewhere: nothing is durable yet.
  EXPECT_EQ(first.wait_for(std::chrono::milliseconds(20)), std::future_status::timeout);
  EXPECT_EQ(db_->Count("write 1"), 0);
  held.Release();
  EXPECT_TRUE(barrier.get().ok()) << barrier.get().ToString();
  // The barrier came after both: they are settled, and were written in order.
  ASSERT_EQ(first.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  ASSERT_EQ(second.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_TRUE(first.get().ok());
  EXPECT_TRUE(second.get().ok());
  const std::vector<std::string> log = db_->Log();
  EXPECT_LT(std::find(log.begin(), log.end(), "write 1"),
            std::find(log.begin(), log.end(), "write 2"));
  EXPECT_TRUE(committer_.poisoned().ok());
}

TEST_F(GroupCommitTest, AFailedQueuedWriteRollsBackItsBatchAndFailsEveryLaterWrite) {
  HeldWriter held(committer_);
  std::shared_future<Status> before = committer_.Queue(Writes("write before"));
  std::shared_future<Status> stale = committer_.Queue([](SqlConnection& db) {
    (void)db.Exec("write stale", {});
    return FailedPrecondition("job 7: version 1 is stale");
  });
  std::shared_future<Status> after = committer_.Queue(Writes("write after"));
  held.Release();
  // One batch: the failure takes the writes queued with it down too, since
  // the caller's memory already holds all of them.
  EXPECT_EQ(stale.get().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(before.get().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(after.get().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(committer_.commits(), 1) << "only the holder's transaction";
  EXPECT_EQ(db_->Count("write after"), 0) << "nothing runs after the failed write";

  const Status poisoned = committer_.poisoned();
  EXPECT_EQ(poisoned.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(poisoned.message().find("restart the server"), std::string::npos) << poisoned.message();
  // Every later write fails the same way without reaching the database.
  const Status later = committer_.Run(Writes("write later"));
  EXPECT_EQ(later.message(), poisoned.message());
  EXPECT_EQ(committer_.Barrier().get().message(), poisoned.message());
  EXPECT_EQ(db_->Count("write later"), 0);
}

TEST_F(GroupCommitTest, AFailedPlainWriteDoesNotPoison) {
  EXPECT_EQ(committer_.Run([](SqlConnection&) { return NotFound("job 9: not found"); }).code(),
            StatusCode::kNotFound);
  EXPECT_TRUE(committer_.poisoned().ok());
  EXPECT_TRUE(committer_.Barrier().get().ok());
  EXPECT_TRUE(committer_.Queue(Writes("write next")).get().ok());
}

TEST_F(GroupCommitTest, AFailedCommitFailsEveryWriteOfTheBatch) {
  db_->on_exec = [](const std::string& sql) {
    return sql == "COMMIT" ? Unavailable("fake: disk full") : Status::Ok();
  };
  std::vector<Status> statuses = RunInOneBatch({Writes("write a"), Writes("write b")});
  for (const Status& status : statuses) {
    EXPECT_EQ(status.code(), StatusCode::kUnavailable);
    EXPECT_EQ(status.message(), "fake: disk full");
  }
  EXPECT_EQ(committer_.commits(), 0);
  EXPECT_GE(db_->Count("ROLLBACK"), 2);
}

TEST_F(GroupCommitTest, ABatchWhereEveryWriteFailedCommitsNothing) {
  Status status = committer_.Run([](SqlConnection&) { return NotFound("job 9: not found"); });
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(committer_.commits(), 0);
  EXPECT_EQ(db_->Count("COMMIT"), 0);
  EXPECT_EQ(db_->Count("ROLLBACK"), 1);
}

TEST_F(GroupCommitTest, AnExceptionInAWriteIsInternalAndTheWriterGoesOn) {
  Status status =
      committer_.Run([](SqlConnection&) -> Status { throw std::runtime_error("boom"); });
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_EQ(status.message(), "store write: boom");
  EXPECT_TRUE(committer_.Run(Writes("write after")).ok());
  EXPECT_EQ(committer_.commits(), 1);
}

TEST_F(GroupCommitTest, ALinkLostBeforeCommitIsReconnectedAndTheBatchRunAgain) {
  int runs = 0;
  db_->on_exec = [&](const std::string& sql) {
    if (sql == "write a" && ++runs == 1) {
      db_->broken = true;
      return Unavailable("fake: server closed the connection");
    }
    return Status::Ok();
  };
  EXPECT_TRUE(committer_.Run(Writes("write a")).ok());
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(db_->reconnects, 1);
  EXPECT_EQ(committer_.commits(), 1);
}

TEST_F(GroupCommitTest, ALinkLostAgainAfterReconnectingIsUnavailable) {
  db_->on_exec = [&](const std::string& sql) {
    if (sql != "write a") return Status::Ok();
    db_->broken = true;
    return Unavailable("fake: server closed the connection");
  };
  Status status = committer_.Run(Writes("write a"));
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(status.message().rfind(
                "database connection lost: fake: server closed the connection (the store is "
                "unavailable",
                0),
            0u)
      << status.message();
  // Once more at once; later tries are the outage's probes, which run no write.
  EXPECT_GE(db_->reconnects, 1);
  EXPECT_EQ(db_->Count("write a"), 2);
  EXPECT_EQ(committer_.commits(), 0);
}

TEST_F(GroupCommitTest, ALinkLostDuringCommitIsNotRetried) {
  db_->on_exec = [&](const std::string& sql) {
    if (sql != "COMMIT") return Status::Ok();
    db_->broken = true;
    return Unavailable("fake: server closed the connection");
  };
  Status status = committer_.Run(Writes("write a"));
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("may or may not have been made"), std::string::npos)
      << status.message();
  // Running it again could write it twice: the caller decides (idempotency key).
  EXPECT_EQ(db_->Count("write a"), 1);
  EXPECT_EQ(db_->reconnects, 0);
}

TEST_F(GroupCommitTest, AServerThatStaysAwayIsUnavailable) {
  db_->broken = true;
  db_->reconnect_fails = true;
  Status status = committer_.Run(Writes("write a"));
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(status.message().rfind("database connection lost: fake: connection refused", 0), 0u)
      << status.message();
  EXPECT_EQ(db_->Count("write a"), 0);
  // The writer says so until the database is back; then writes go through.
  EXPECT_EQ(committer_.outage().code(), StatusCode::kUnavailable);
  EXPECT_EQ(committer_.Run(Writes("write b")).code(), StatusCode::kUnavailable);
  {
    std::lock_guard lock(db_->mutex);
    db_->reconnect_fails = false;
  }
  // The writer probes the database while it holds nothing, also while
  // barriers (every heartbeat's) keep coming.
  for (int i = 0; i < 5000 && !committer_.outage().ok(); ++i) {
    (void)committer_.Barrier();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(committer_.outage().ok());
  EXPECT_TRUE(committer_.Run(Writes("write c")).ok());
}

TEST_F(GroupCommitTest, QueuedWritesWaitThroughAnOutageAndAreWrittenInOrderWhenItEnds) {
  {
    std::lock_guard lock(db_->mutex);
    db_->broken = true;
    db_->reconnect_fails = true;
  }
  std::shared_future<Status> first = committer_.Queue(Writes("queued 1"));
  for (int i = 0; i < 5000 && committer_.outage().ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(committer_.outage().code(), StatusCode::kUnavailable);
  std::shared_future<Status> second = committer_.Queue(Writes("queued 2"));
  std::shared_future<Status> barrier = committer_.Barrier();
  // Plain writes are refused meanwhile; the queued ones and the barrier wait.
  EXPECT_EQ(committer_.Run(Writes("plain")).code(), StatusCode::kUnavailable);
  EXPECT_EQ(barrier.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  EXPECT_EQ(first.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  {
    std::lock_guard lock(db_->mutex);
    db_->reconnect_fails = false;
  }
  EXPECT_TRUE(first.get().ok());
  EXPECT_TRUE(second.get().ok());
  EXPECT_TRUE(barrier.get().ok());
  EXPECT_TRUE(committer_.poisoned().ok());
  EXPECT_TRUE(committer_.outage().ok());
  EXPECT_EQ(db_->Count("plain"), 0);
  std::vector<std::string> log = db_->Log();
  auto one = std::find(log.begin(), log.end(), "queued 1");
  auto two = std::find(log.begin(), log.end(), "queued 2");
  ASSERT_NE(one, log.end());
  ASSERT_NE(two, log.end());
  EXPECT_LT(one, two);
}

// A fence over the fake database: claims are logged, and the database
// "remembers" the last transaction that committed.
struct FakeFence {
  std::shared_ptr<FakeDatabase> db;
  bool fenced = false;
  int64_t claimed = 0;
  int64_t committed = 0;
  WriteFence Make() {
    return WriteFence{[this](SqlConnection&, int64_t transaction) {
                        if (fenced) return FailedPrecondition("fenced: another server leads");
                        claimed = transaction;
                        return Status::Ok();
                      },
                      [this](SqlConnection&, int64_t transaction) -> Result<bool> {
                        return committed == transaction;
                      }};
  }
};

class FencedGroupCommitTest : public ::testing::Test {
 protected:
  GroupCommitter::Options Options() {
    GroupCommitter::Options options = FastRetries();
    options.fence = fence_.Make();
    return options;
  }
  std::shared_ptr<FakeDatabase> db_ = std::make_shared<FakeDatabase>();
  FakeFence fence_{db_};
};

TEST_F(FencedGroupCommitTest, AFencedWriterFailsThisAndEveryLaterWrite) {
  GroupCommitter committer(std::make_unique<FakeConnection>(db_), SqlDialect::kPostgres, Options());
  EXPECT_TRUE(committer.Run(Writes("write a")).ok());
  EXPECT_EQ(fence_.claimed, 1);
  fence_.fenced = true;
  Status status = committer.Run(Writes("write b"));
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(committer.poisoned().code(), StatusCode::kFailedPrecondition);
  fence_.fenced = false;
  EXPECT_FALSE(committer.Run(Writes("write c")).ok());
  EXPECT_EQ(db_->Count("write b"), 0);
  EXPECT_EQ(db_->Count("write c"), 0);
}

TEST_F(FencedGroupCommitTest, ACommitLostInTransitIsAskedAboutAndNeverWrittenTwice) {
  GroupCommitter committer(std::make_unique<FakeConnection>(db_), SqlDialect::kPostgres, Options());
  int commits = 0;
  db_->on_exec = [&](const std::string& sql) {
    if (sql != "COMMIT" || ++commits > 1) return Status::Ok();
    fence_.committed = fence_.claimed;
    db_->broken = true;
    return Unavailable("fake: server closed the connection");
  };
  // Committed although its answer was lost: done, and not run again.
  EXPECT_TRUE(committer.Queue(Writes("write a")).get().ok());
  EXPECT_EQ(db_->Count("write a"), 1);
  EXPECT_TRUE(committer.poisoned().ok());
}

TEST_F(FencedGroupCommitTest, ACommitLostBeforeItLandedIsRunAgain) {
  GroupCommitter committer(std::make_unique<FakeConnection>(db_), SqlDialect::kPostgres, Options());
  int commits = 0;
  db_->on_exec = [&](const std::string& sql) {
    if (sql != "COMMIT" || ++commits > 1) return Status::Ok();
    db_->broken = true;
    return Unavailable("fake: server closed the connection");
  };
  EXPECT_TRUE(committer.Queue(Writes("write a")).get().ok());
  EXPECT_EQ(db_->Count("write a"), 2);
  EXPECT_TRUE(committer.poisoned().ok());
}

}  // namespace
}  // namespace berth::store
