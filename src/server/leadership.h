// Leadership: a server on PostgreSQL acts only while it holds the store's
// lease (store/leader_lease.h). Several servers may share one database:
// one leads, the others stand by.
//
// Take() waits for the database, then for the lease. Meanwhile this server
// listens already and answers every request with a 503 naming the leader
// (header X-Berth-Leader; clients given several addresses follow it), so
// clients and agents find the leader through any server.
//
// Once it leads, a thread renews the lease every third of its ttl. The
// lease is held for sure until the send time of the last renewal that
// succeeded plus the ttl (the database expires it later than that):
// Leading() fails past it, so a leader cut off from its database, or
// paused, stops answering before a standby can take over. When a renewal
// finds another server took the lease, the server must stop at once
// (`lost`): its memory is no longer the truth, and the fence on its store
// refuses its writes anyway.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/status.h"
#include "http/server.h"
#include "store/leader_lease.h"

namespace berth::server {

class Leadership {
 public:
  struct Options {
    std::string database_url;
    // What clients are told to use (advertise_url; the listener's URL by
    // default). Unique per server.
    std::string url;
    std::chrono::milliseconds ttl{5000};
    // Asked between tries; false ends the wait (the process was told to stop).
    std::function<bool()> keep_waiting = [] { return true; };
  };

  // Serves the standby's answers with `standby_http` (the server's own
  // listener options) until this server holds the lease, then closes that
  // listener and returns; `port` is the port it bound (for the server's own
  // listener). Unavailable when keep_waiting said stop.
  static Result<std::unique_ptr<Leadership>> Take(Options options, http::ServerOptions standby_http,
                                                  int& port);
  ~Leadership();
  Leadership(const Leadership&) = delete;
  Leadership& operator=(const Leadership&) = delete;

  const store::LeaderLease& lease() const { return *lease_; }
  // Renews on a thread of its own until Release() or destruction; calls
  // `lost` (on that thread) when another server took the lease.
  void KeepRenewing(std::function<void(const Status&)> lost);
  // Until when the lease is surely held.
  std::chrono::steady_clock::time_point valid_until() const;
  // OK while the lease is surely held; else Unavailable saying so.
  Status Leading() const;
  // Whether the last renewal failed because the database cannot be
  // reached (then no other server can have taken the lease from it yet).
  bool database_away() const { return database_away_; }
  // Stops renewing and gives the lease up, so a standby takes over at once
  // (a clean stop, after the store's last write).
  void Release();

 private:
  Leadership(Options options, std::unique_ptr<store::LeaderLease> lease);
  void RenewLoop(std::function<void(const Status&)> lost);
  void StopRenewing();

  const Options options_;
  std::unique_ptr<store::LeaderLease> lease_;
  std::atomic<int64_t> valid_until_ns_{0};  // steady_clock, since its epoch
  std::atomic<bool> database_away_{false};
  std::mutex mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;  // guarded by mutex_
  std::thread renewer_;
};

// Retries `attempt` while it fails with Unavailable (the database is not
// there yet), logging why, with backoff up to 5 s, until it succeeds, fails
// otherwise, or `keep_waiting` says stop.
// Runs `attempt` again while it fails with Unavailable (the database is not
// there yet), logging why, with backoff up to 5 s; returns its first other
// answer, or Unavailable once `keep_waiting` says stop.
Status WaitForDatabase(const std::function<Status()>& attempt,
                       const std::function<bool()>& keep_waiting);

}  // namespace berth::server
