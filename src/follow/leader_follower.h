// How the CLI and the agent reach a control plane that runs as a leader
// and standbys (issue 32): several addresses, one of which serves at a
// time. A standby answers every API request with 503 and, when it knows
// the leader, names it in `X-Berth-Leader`; a server that is starting or
// gone refuses connections. Each request:
//
//   goes to the address that answered last (at first, the list's first)
//     any answer but a standby's 503          -> returned, whatever its status
//     503 with X-Berth-Leader: URL             -> URL next (in the list or not)
//     503 "standby: ..." naming no leader      -> the next address in the list
//     no connection (refused, timed out)       -> the next address in the list
//     connection lost once the request may     -> the next address, only for a
//       have arrived                              request safe to replay (Replay);
//                                                 else that failure, at once
//   tried in sweeps: each address at most once per sweep, at once; between
//   sweeps a backoff of 100 ms doubling to 1 s, all within `patience` (15 s:
//   a standby takes over within 10 s). Patience zero: one sweep (the agent,
//   whose own loop retries). A single address that no answer has led away
//   from is one sweep too, so a single server fails as fast as before.
//   When every attempt failed: Unavailable naming each address tried and
//   its last error.
//
// A 503 without the header and not from a standby (a leader's own "store
// unavailable") is an answer like any other: the caller decides.
//
// Not thread-safe: one per thread (the CLI has one; the agent's loop one).
#pragma once

#include <httplib.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "follow/replay.h"

namespace berth::follow {

inline constexpr char kLeaderHeader[] = "X-Berth-Leader";

// "http://a:8080, b:8080" -> {"http://a:8080", "http://b:8080"}: URLs
// separated by commas, blanks around them ignored, http:// added to those
// without a scheme, a trailing '/' dropped. InvalidArgument naming `flag`
// for an empty list or an empty item.
Result<std::vector<std::string>> ParseServerList(const std::string& text, const std::string& flag);

// The same list written back, comma-separated (for messages).
std::string JoinServerList(const std::vector<std::string>& addresses);

struct FollowOptions {
  std::chrono::milliseconds patience{15'000};
  std::chrono::milliseconds first_backoff{100};
  std::chrono::milliseconds max_backoff{1'000};
  // Sets up every client made (timeouts, token, CA certificate).
  std::function<void(httplib::Client&)> configure;
};

class LeaderFollower {
 public:
  // REQUIRES: `addresses` is not empty (ParseServerList's output).
  LeaderFollower(std::vector<std::string> addresses, FollowOptions options);

  // Sends one request (`send` may be called once per attempt) as the
  // header describes; the answer of the server that answered, or
  // Unavailable.
  using Send = std::function<httplib::Result(httplib::Client&)>;
  Result<httplib::Response> Request(const Send& send, Replay replay);

  // Where requests go now: the list's first, or what answered last.
  const std::string& current() const { return current_; }
  const std::vector<std::string>& addresses() const { return addresses_; }

 private:
  struct Attempt {
    std::string address;
    std::string error;
  };
  // What one attempt learned: an answer to return, where to go next, or
  // that the request must end here.
  enum class Outcome { kAnswered, kMove, kStop };
  Outcome Classify(const httplib::Result& result, Replay replay, std::string& next,
                   std::string& error) const;
  std::string NextInList();
  void MoveTo(const std::string& address);
  httplib::Client& ClientFor(const std::string& address);
  static Status Failed(const std::vector<Attempt>& attempts);

  std::vector<std::string> addresses_;
  FollowOptions options_;
  std::string current_;
  size_t position_ = 0;  // in addresses_: the last listed address used
  // One client per address, kept so the agent's connection stays alive
  // from one heartbeat to the next.
  std::map<std::string, std::unique_ptr<httplib::Client>> clients_;
};

}  // namespace berth::follow
