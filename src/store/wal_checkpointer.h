// WalCheckpointer: copies a SQLite database's write-ahead log back into the
// database file on a thread of its own, so that no commit waits for it.
//
// By default the connection that commits the transaction taking the WAL
// past 1,000 pages runs the checkpoint itself, inside that COMMIT: it copies
// those pages into the database file and fsyncs it (4-6 ms on the machines
// of docs/performance.md, against 0.2-1 ms for the commit's own flush). The
// store has one writer, so every write queued behind that transaction waited
// too: the scheduler's p99 was those checkpoints. The writer's connection
// hands the WAL's size to Notify() after each commit instead (sqlite3's WAL
// hook, which replaces the automatic checkpoint), and this thread runs a
// PASSIVE checkpoint on its own connection: it never blocks the writer or a
// reader, and leaves frames still being read for the next one.
//
// Once a checkpoint has copied every frame, the writer's next transaction
// starts the WAL over from its beginning, so the file stops growing at about
// the threshold. A checkpoint beside a writer that never pauses never copies
// every frame (more arrive while it runs), and the WAL would grow for as
// long as the writes go on; past four times the threshold the writer runs
// one itself, as SQLite would, which nothing can overtake. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/status.h"

struct sqlite3;

namespace berth::store {

class WalCheckpointer {
 public:
  // SQLite's own default threshold for its automatic checkpoint.
  static constexpr int kDefaultThresholdFrames = 1000;

  // Opens its own connection to the database at `path` and starts the
  // thread. Checkpoints once Notify() reports `threshold_frames` or more
  // that no checkpoint has copied yet; Notify() asks the writer to at four
  // times that in all.
  static Result<std::unique_ptr<WalCheckpointer>> Start(
      const std::string& path, int threshold_frames = kDefaultThresholdFrames);
  // Stops the thread (finishing a checkpoint under way) and closes.
  ~WalCheckpointer();
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  // The writer committed and the WAL now holds `frames` pages. Quick: it is
  // called inside the writer's COMMIT. True when the WAL has grown past the
  // limit and the writer should checkpoint it itself, now.
  bool Notify(int frames);
  // Checkpoints that copied every frame of the WAL so far (for tests).
  int64_t complete_checkpoints() const;

 private:
  WalCheckpointer(sqlite3* db, int threshold_frames);
  void Loop();

  sqlite3* const db_;
  const int threshold_frames_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool wanted_ = false;               // guarded by mutex_
  int copied_frames_ = 0;             // by the last checkpoint; guarded by mutex_
  bool stopping_ = false;             // guarded by mutex_
  int64_t complete_checkpoints_ = 0;  // guarded by mutex_
  std::thread thread_;                // last: started once everything above exists
};

}  // namespace berth::store
