// LeaderLease: which of several servers on one PostgreSQL database leads.
//
// One row (table `leader`) holds the lease: an epoch, the holder, the URL
// clients should use, and when it expires by the database's clock (so the
// servers' own clocks never need to agree). A server takes the lease only
// once it has expired, which raises the epoch; the leader renews it well
// before then. A standby polls and takes over when the leader stops
// renewing (killed, paused, cut off).
//
// Why a row and not an advisory lock: a paused leader keeps its session,
// and with it a session lock, for as long as TCP keeps the link; a lease
// runs out.
//
// The lease alone cannot stop a leader that was paused past its expiry from
// writing when it resumes: the fence can. Every write transaction of the
// leader's store claims the row for its epoch first (Fence()), so once a
// new leader has raised the epoch, nothing of the old one commits.
//
// PostgreSQL only: a SQLite store has one server, held to it by the data
// dir's lock. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "common/status.h"
#include "store/group_commit.h"
#include "store/sql_connection.h"
#include "store/store.h"

namespace berth::store {

struct LeaderInfo {
  int64_t epoch = 0;
  std::string holder;  // who took it: "pid P on HOST"
  std::string url;     // where its clients reach it
  bool live = false;   // not expired
};

class LeaderLease {
 public:
  struct Options {
    std::string holder;  // unique to this process
    std::string url;
    std::chrono::milliseconds ttl{5000};
  };

  // Uses its own connection (not the store's): brings the schema up to
  // date (a standby may start on an empty database) and creates the row.
  static Result<std::unique_ptr<LeaderLease>> Open(std::unique_ptr<SqlConnection> connection,
                                                   Options options);
  // The same over a new PostgreSQL connection (a libpq string or URL).
  static Result<std::unique_ptr<LeaderLease>> Connect(const std::string& url, Options options);

  // Takes the lease if it has expired (or was never taken): true, and
  // epoch() is the new epoch. False while another server holds it.
  Result<bool> TryAcquire();
  // Extends the lease by the ttl from now (the database's now).
  // FailedPrecondition when another server took it since; Unavailable when
  // the database cannot be reached.
  Status Renew();
  // Ends the lease now, so a standby need not wait for it to expire.
  void Release();
  // Who holds the lease (NotFound before anyone took it).
  Result<LeaderInfo> Current();

  int64_t epoch() const;
  const Options& options() const { return options_; }

  // For the store's writer (GroupCommitter): each transaction first claims
  // the row for this epoch, so none commits once another server leads.
  WriteFence Fence() const;

 private:
  LeaderLease(std::unique_ptr<SqlConnection> connection, Options options)
      : connection_(std::move(connection)), options_(std::move(options)) {}
  // The connection, reconnected when it broke.
  Result<SqlConnection*> Connection();

  mutable std::mutex mutex_;
  std::unique_ptr<SqlConnection> connection_;  // guarded by mutex_
  const Options options_;
  int64_t epoch_ = 0;  // guarded by mutex_
};

// Opens the PostgreSQL store at `url` for the lease's holder: each of its
// write transactions is fenced by the lease's epoch.
Result<std::unique_ptr<Store>> OpenLeaderStore(const std::string& url, const LeaderLease& lease);

}  // namespace berth::store
