#include "store/wal_checkpointer.h"

#include <sqlite3.h>

#include <utility>

namespace berth::store {

Result<std::unique_ptr<WalCheckpointer>> WalCheckpointer::Start(const std::string& path,
                                                                int threshold_frames) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr);
  if (rc != SQLITE_OK) {
    const std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return Unavailable("sqlite: cannot open " + path + " for checkpoints: " + message);
  }
  // Its own automatic checkpoint too would be a second writer of the file.
  sqlite3_wal_autocheckpoint(db, 0);
  // A connection finds the WAL only once it reads the database; until then
  // a checkpoint does nothing (and reports -1 frames).
  if (sqlite3_exec(db, "SELECT count(*) FROM sqlite_schema", nullptr, nullptr, nullptr) !=
      SQLITE_OK) {
    const std::string message = sqlite3_errmsg(db);
    sqlite3_close(db);
    return Unavailable("sqlite: cannot read " + path + " for checkpoints: " + message);
  }
  return std::unique_ptr<WalCheckpointer>(new WalCheckpointer(db, threshold_frames));
}

WalCheckpointer::WalCheckpointer(sqlite3* db, int threshold_frames)
    : db_(db), threshold_frames_(threshold_frames) {
  thread_ = std::thread([this] { Loop(); });
}

WalCheckpointer::~WalCheckpointer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  sqlite3_close(db_);
}

bool WalCheckpointer::Notify(int frames) {
  if (frames < threshold_frames_) return false;
  // The writer's turn: waking this thread too would have it take the
  // checkpoint lock first, again and again, and never finish.
  if (frames >= 4 * threshold_frames_) return true;
  {
    std::lock_guard lock(mutex_);
    // Fewer frames than were copied: the WAL started over since.
    if (frames < copied_frames_) copied_frames_ = 0;
    // Only for a threshold's worth not copied yet: each checkpoint ends
    // with an fsync of the database file, and under steady writes one per
    // commit cost a third of the submits/s of 8 clients.
    if (frames - copied_frames_ < threshold_frames_) return false;
    wanted_ = true;
  }
  wake_.notify_one();
  return false;
}

int64_t WalCheckpointer::complete_checkpoints() const {
  std::lock_guard lock(mutex_);
  return complete_checkpoints_;
}

void WalCheckpointer::Loop() {
  while (true) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || wanted_; });
      if (stopping_) return;
      wanted_ = false;
    }
    int log_frames = 0;
    int copied_frames = 0;
    // A failure (the disk, or another process's checkpoint holding the
    // lock: SQLITE_BUSY) leaves the WAL as it was: the next commit past
    // the threshold asks again.
    const int rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &log_frames,
                                             &copied_frames);
    if (rc == SQLITE_OK && log_frames > 0) {
      std::lock_guard lock(mutex_);
      copied_frames_ = copied_frames;
      if (copied_frames == log_frames) ++complete_checkpoints_;
    }
  }
}

}  // namespace berth::store
