// The SQLite writer's WAL is checkpointed by a thread of its own
// (wal_checkpointer.h), on a real database file.
#include "store/wal_checkpointer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "store/sqlite_store.h"
#include "store/store_test_fixture.h"

namespace berth::store {
namespace {

namespace fs = std::filesystem;

class WalCheckpointerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("berth-wal-test-" + store_testing::RandomHex());
    fs::create_directories(dir_);
    path_ = (dir_ / "berth.db").string();
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  // Commits `commits` transactions of one row of `bytes` each through
  // `connection` (a WAL page per 4 KiB, and a few more).
  static void WriteRows(SqlConnection& connection, int commits, size_t bytes = 3000) {
    ASSERT_TRUE(connection.Exec("CREATE TABLE IF NOT EXISTS t (x TEXT)", {}).ok());
    for (int i = 0; i < commits; ++i) {
      ASSERT_TRUE(connection.Exec("INSERT INTO t (x) VALUES ($1)", {std::string(bytes, 'x')}).ok());
    }
  }
  // Rows of t in the database file itself, without its WAL: what the
  // checkpoints have copied there (read from a copy of the file alone).
  int64_t RowsInTheDatabaseFile() {
    const fs::path copy = dir_ / "alone.db";
    fs::copy_file(path_, copy, fs::copy_options::overwrite_existing);
    auto connection = SqliteConnection::Open(copy.string());
    EXPECT_TRUE(connection.ok()) << connection.status().ToString();
    if (!connection.ok()) return -1;
    auto rows = (*connection)->Exec("SELECT count(*) FROM t", {});
    if (!rows.ok()) return 0;  // not even the table yet
    return std::stoll((*rows)[0][0].value_or("-1"));
  }
  static bool WaitFor(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }
  uintmax_t WalBytes() const { return fs::file_size(path_ + "-wal"); }

  fs::path dir_;
  std::string path_;
};

TEST_F(WalCheckpointerTest, CheckpointsOnlyOnceTheWalReachesTheThreshold) {
  // A writer that never checkpoints by itself.
  auto raw = SqliteConnection::Open(path_);
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  ASSERT_TRUE((*raw)->Exec("PRAGMA wal_autocheckpoint=0", {}).ok());
  WriteRows(**raw, 300);
  ASSERT_EQ(RowsInTheDatabaseFile(), 0);

  auto checkpointer = WalCheckpointer::Start(path_, /*threshold_frames=*/1000);
  ASSERT_TRUE(checkpointer.ok()) << checkpointer.status().ToString();
  EXPECT_FALSE((*checkpointer)->Notify(999));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ((*checkpointer)->complete_checkpoints(), 0);
  EXPECT_EQ(RowsInTheDatabaseFile(), 0);

  EXPECT_FALSE((*checkpointer)->Notify(1000));  // the writer need not

  ASSERT_TRUE(WaitFor([&] { return (*checkpointer)->complete_checkpoints() == 1; }));
  EXPECT_EQ(RowsInTheDatabaseFile(), 300);
}

TEST_F(WalCheckpointerTest, TheWritersWalIsCheckpointedByItsThreadAndStopsGrowing) {
  auto writer = SqliteConnection::OpenWriter(path_);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  ASSERT_NE((*writer)->checkpointer(), nullptr);
  // About 60 MB through the WAL: 3,000 rows of four pages and more.
  WriteRows(**writer, 3'000, 16'000);
  ASSERT_TRUE(WaitFor([&] { return (*writer)->checkpointer()->complete_checkpoints() >= 2; }));
  // The writer never paused long enough for the checkpointer to copy every
  // frame, so its own checkpoints past four times the threshold started the
  // WAL over, instead of the WAL keeping every page that went through it.
  EXPECT_LE(WalBytes(), 5u * WalCheckpointer::kDefaultThresholdFrames * (4096 + 24));
}

}  // namespace
}  // namespace berth::store
