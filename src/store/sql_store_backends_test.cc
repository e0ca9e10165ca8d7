// What only one implementation of the Store has to show: SQLite's
// write-ahead log and its update statements, PostgreSQL's reconnection, and
// how each says that its database cannot be opened. The suite every
// implementation passes is store_test.cc.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "store/store.h"
#include "store/store_test_fixture.h"

namespace berth::store {
namespace {

using namespace store_testing;  // NOLINT: the suite's fixture and helpers

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(backend_.SetUp().ok()); }
  SqliteBackend backend_;
};

TEST_F(SqliteStoreTest, UsesTheWriteAheadLog) {
  ASSERT_TRUE(backend_.Open().ok());
  Result<std::unique_ptr<SqlConnection>> raw = backend_.Raw();
  ASSERT_TRUE(raw.ok());
  Result<std::vector<SqlRow>> mode = (*raw)->Exec("PRAGMA journal_mode", {});
  ASSERT_TRUE(mode.ok());
  EXPECT_EQ(mode->at(0).at(0), "wal");
}

// SQLite rewrites the index entry of every indexed column an UPDATE's SET
// names, even to the same value, so an update that changes only a job's
// state and body must not name the others (UpdateJob in sql_store.cc: 7
// pages per update against 3). A trigger on those columns counts every
// update that names one of them.
TEST_F(SqliteStoreTest, AnUpdateNamesTheOtherIndexedColumnsOnlyWhenOneChanged) {
  Result<std::unique_ptr<Store>> store = backend_.Open();
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Result<std::vector<JobId>> ids = (*store)->SubmitJobs("alice", "", {NewJob("train", "vision")});
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  Result<std::unique_ptr<SqlConnection>> raw = backend_.Raw();
  ASSERT_TRUE(raw.ok());
  ASSERT_TRUE((*raw)->Exec("CREATE TABLE wide_updates (id INTEGER)", {}).ok());
  ASSERT_TRUE((*raw)
                  ->Exec("CREATE TRIGGER count_wide_updates"
                         " AFTER UPDATE OF user_name, queue, submit_time, array_parent ON jobs"
                         " BEGIN INSERT INTO wide_updates (id) VALUES (new.id); END",
                         {})
                  .ok());
  auto wide_updates = [&] {
    Result<std::vector<SqlRow>> rows = (*raw)->Exec("SELECT count(*) FROM wide_updates", {});
    return rows.ok() ? rows->at(0).at(0).value_or("?") : rows.status().ToString();
  };

  Result<JobRecord> job = (*store)->GetJob(ids->at(0));
  ASSERT_TRUE(job.ok());
  job->state = JobState::kRunning;
  job->reason = core::JobReason::kExited;
  ASSERT_TRUE((*store)->UpdateJobs({*job}).ok());
  EXPECT_EQ(wide_updates(), "0");

  job = (*store)->GetJob(ids->at(0));
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state, JobState::kRunning);
  job->request.queue = "nlp";
  ASSERT_TRUE((*store)->UpdateJobs({*job}).ok());
  EXPECT_EQ(wide_updates(), "1");
  job = (*store)->GetJob(ids->at(0));
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->request.queue, "nlp");
  EXPECT_EQ(job->version, 3);
}

TEST(SqliteStoreOpenTest, AnUnopenablePathIsUnavailable) {
  Result<std::unique_ptr<Store>> store = OpenSqliteStore("/nonexistent-dir/sub/berth.db");
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(store.status().message().find("/nonexistent-dir/sub/berth.db"), std::string::npos);
}

class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Status status = backend_.SetUp();
    ASSERT_TRUE(status.ok()) << status.ToString();
  }
  PostgresBackend backend_;
};

TEST_F(PostgresStoreTest, ReconnectsOnceWhenTheServerDropsItsConnections) {
  Result<std::unique_ptr<Store>> opened = backend_.Open();
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Store& store = **opened;
  Result<std::vector<JobId>> first = store.SubmitJobs("alice", "", {NewJob("before")});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(store.GetJob(first->at(0)).ok());  // opens a reader

  for (int round = 0; round < 2; ++round) {
    ASSERT_TRUE(backend_.KillStoreConnections().ok());
    // Both the writer and the pooled reader find their sessions gone.
    Result<std::vector<JobId>> ids = store.SubmitJobs("alice", "", {NewJob("after")});
    ASSERT_TRUE(ids.ok()) << ids.status().ToString();
    Result<JobRecord> job = store.GetJob(ids->at(0));
    ASSERT_TRUE(job.ok()) << job.status().ToString();
    EXPECT_EQ(job->request.name, "after");
  }
}

TEST(PostgresStoreOpenTest, AnUnreachableServerIsUnavailable) {
  // Port 1 on loopback: nothing listens there, the connection is refused.
  Result<std::unique_ptr<Store>> store =
      OpenPostgresStore("postgresql://berth@127.0.0.1:1/berth?connect_timeout=5");
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(store.status().message().find("postgres: cannot connect"), std::string::npos)
      << store.status().message();
}

}  // namespace
}  // namespace berth::store
