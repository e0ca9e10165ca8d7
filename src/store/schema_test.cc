// The Store's schema over both databases: the version it records, a newer
// database refused, and each older version migrated on open, its rows read
// back with the defaults of the columns it lacked.
#include <gtest/gtest.h>

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "store/store.h"
#include "store/store_test_fixture.h"

namespace berth::store {
namespace {

using namespace store_testing;  // NOLINT: the suite's fixture and helpers
using testing_records::Queue;
using testing_records::SomeQueues;

template <typename Backend>
class SchemaTest : public StoreTest<Backend> {
 protected:
  // The database as an older Berth left it: the store closed, then
  // `statements` run on it (drop the newer columns, set the version, add
  // rows of the time). The raw connection stays open, to read it later.
  std::unique_ptr<SqlConnection> AsAnOlderBerthLeftIt(
      std::initializer_list<const char*> statements) {
    this->store_.reset();
    Result<std::unique_ptr<SqlConnection>> raw = this->backend_.Raw();
    EXPECT_TRUE(raw.ok()) << raw.status().ToString();
    if (!raw.ok()) return nullptr;
    for (const char* statement : statements) {
      const Status status = (*raw)->Exec(statement, {}).status();
      EXPECT_TRUE(status.ok()) << statement << ": " << status.ToString();
    }
    return std::move(raw).value();
  }

  static std::string RecordedVersion(SqlConnection& raw) {
    Result<std::vector<SqlRow>> rows = raw.Exec("SELECT version FROM schema_version", {});
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() && rows->size() == 1 ? rows->at(0).at(0).value_or("") : "";
  }
};

using Backends = ::testing::Types<SqliteBackend, PostgresBackend>;
TYPED_TEST_SUITE(SchemaTest, Backends, BackendNames);

TYPED_TEST(SchemaTest, TheSchemaVersionIsRecorded) {
  Result<std::unique_ptr<SqlConnection>> raw = this->backend_.Raw();
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  EXPECT_EQ(this->RecordedVersion(**raw), std::to_string(kSchemaVersion));
  // Reopening an up-to-date database changes nothing.
  this->store_.reset();
  this->store_ = this->Open();
  EXPECT_EQ((*raw)->Exec("SELECT version FROM schema_version", {})->size(), 1u);
}

TYPED_TEST(SchemaTest, ADatabaseFromANewerBerthIsRefused) {
  ASSERT_NE(this->AsAnOlderBerthLeftIt({"UPDATE schema_version SET version = 99"}), nullptr);
  Result<std::unique_ptr<Store>> store = this->backend_.Open();
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find("version 99, newer than this binary's " +
                                          std::to_string(kSchemaVersion)),
            std::string::npos)
      << store.status().message();
}

// Issue 27: a database of schema version 1 (tokens without `expires`) is
// migrated on open, and its tokens read back as never expiring.
TYPED_TEST(SchemaTest, AVersion1DatabaseIsMigratedAndItsTokensNeverExpire) {
  std::unique_ptr<SqlConnection> raw = this->AsAnOlderBerthLeftIt(
      {"DROP TABLE leader", "ALTER TABLE queues DROP COLUMN governance",
       "ALTER TABLE tokens DROP COLUMN expires", "ALTER TABLE usage_runs DROP COLUMN cpu_time_us",
       "ALTER TABLE usage_runs DROP COLUMN peak_memory_mib",
       "UPDATE schema_version SET version = 1",
       "INSERT INTO tokens (id, hash, user_name, role, node, created, revoked)"
       " VALUES ('t-old', 'hash-old', 'alice', 'user', '', 5, 0)"});
  ASSERT_NE(raw, nullptr);
  this->store_ = this->Open();
  ASSERT_NE(this->store_, nullptr);

  Result<TokenRecord> old = this->store_->FindTokenByHash("hash-old");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->user, "alice");
  EXPECT_EQ(old->expires, std::nullopt);
  TokenRecord expiring = *old;
  expiring.expires = core::Time::FromSeconds(60);
  ASSERT_TRUE(this->store_->PutToken(expiring).ok());
  EXPECT_EQ(*this->store_->FindTokenByHash("hash-old"), expiring);
  EXPECT_EQ(this->RecordedVersion(*raw), std::to_string(kSchemaVersion));
}

// Issue 27: a database of schema version 2 (queues without governance) is
// migrated on open, and its queues read back ungoverned.
TYPED_TEST(SchemaTest, AVersion2DatabaseIsMigratedAndItsQueuesReadUngoverned) {
  std::unique_ptr<SqlConnection> raw = this->AsAnOlderBerthLeftIt(
      {"DROP TABLE leader", "ALTER TABLE queues DROP COLUMN governance",
       "ALTER TABLE usage_runs DROP COLUMN cpu_time_us",
       "ALTER TABLE usage_runs DROP COLUMN peak_memory_mib",
       "UPDATE schema_version SET version = 2",
       "INSERT INTO queues (ordinal, name, parent, guaranteed_milli, ceiling_milli)"
       " VALUES (0, 'old', '', 4000, NULL)"});
  ASSERT_NE(raw, nullptr);
  this->store_ = this->Open();
  ASSERT_NE(this->store_, nullptr);
  Result<std::vector<core::QueueSpec>> queues = this->store_->ListQueues();
  ASSERT_TRUE(queues.ok()) << queues.status().ToString();
  EXPECT_EQ(*queues, std::vector<core::QueueSpec>{Queue("old", "", 4)});
  ASSERT_TRUE(this->store_->PutQueues(SomeQueues()).ok());
  EXPECT_EQ(*this->store_->ListQueues(), SomeQueues());
  EXPECT_EQ(this->RecordedVersion(*raw), std::to_string(kSchemaVersion));
}

// Issue 27: a database of schema version 3 (runs without measurements) is
// migrated on open; its runs read back as not measured.
TYPED_TEST(SchemaTest, AVersion3DatabaseIsMigratedAndItsRunsWereNotMeasured) {
  std::unique_ptr<SqlConnection> raw = this->AsAnOlderBerthLeftIt(
      {"DROP TABLE leader", "ALTER TABLE usage_runs DROP COLUMN cpu_time_us",
       "ALTER TABLE usage_runs DROP COLUMN peak_memory_mib",
       "UPDATE schema_version SET version = 3",
       "INSERT INTO usage_runs (job_id, user_name, queue, gpu_milli, start_time, end_time)"
       " VALUES (4, 'alice', 'vision', 1000, 10, 20)"});
  ASSERT_NE(raw, nullptr);
  this->store_ = this->Open();
  ASSERT_NE(this->store_, nullptr);
  Result<std::vector<UsageRecord>> runs =
      this->store_->ListUsage(core::Time::FromSeconds(0), core::Time::FromSeconds(100));
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ(runs->front().job, JobId(4));
  EXPECT_EQ(runs->front().peak_memory, std::nullopt);
  EXPECT_EQ(runs->front().cpu_time, std::nullopt);
  EXPECT_EQ(this->RecordedVersion(*raw), std::to_string(kSchemaVersion));
}

}  // namespace
}  // namespace berth::store
