// Whether a request may be sent again after its connection was lost once
// it may have reached the server (leader_follower.h). A request that never
// left (no connection) is always sent again. Apart, so that callers name it
// without the HTTP library's header.
#pragma once

namespace berth::follow {

enum class Replay {
  kSafe,    // twice does what once does: GET, cancel, a submit with its idempotency key
  kUnsafe,  // could act twice (a token created twice): never resent
};

}  // namespace berth::follow
