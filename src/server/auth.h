// API authentication: bearer tokens, stored hashed, each with one role.
//
// A token reads "berth_<id>_<secret>": the id is public (listings, logs),
// the secret 32 random bytes in hex. Only SHA-256(secret) is stored, so a
// leaked database does not leak usable tokens.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"
#include "store/records.h"
#include "store/store.h"

namespace berth::server {

// Who is calling.
struct Principal {
  std::string user;
  store::Role role = store::Role::kUser;
  std::string node;  // agents: the node they speak for

  bool admin() const { return role == store::Role::kAdmin; }
};

std::string_view RoleName(store::Role role);
std::optional<store::Role> ParseRole(std::string_view name);

// A freshly issued token: the secret is shown once, the record is stored.
struct IssuedToken {
  std::string token;
  store::TokenRecord record;
};

// REQUIRES for agents: a node name. InvalidArgument names a bad user/role.
Result<IssuedToken> IssueToken(std::string user, store::Role role, std::string node,
                               core::Time now);

// Hex SHA-256 of a token's secret part; InvalidArgument when the token is
// not of the berth_<id>_<secret> form.
Result<std::string> HashToken(std::string_view token);

// Turns an Authorization header into a Principal, caching lookups (tokens
// are checked on every request). Thread-safe.
//
// A token is refused from its expiry on, by `clock`, also while cached. A
// revocation holds from the next request once the revoked record is stored
// and Forget has dropped the token from the cache: a lookup that read the
// store before the revocation does not put the token back.
class Authenticator {
 public:
  Authenticator(store::Store& store, const Clock& clock) : store_(store), clock_(clock) {}

  // Unauthenticated (no, malformed, unknown, revoked or expired token) or the
  // principal.
  Result<Principal> Authenticate(std::string_view authorization_header);
  // Drops the token with this hash from the cache. REQUIRES: its revoked
  // record is stored.
  void Forget(const std::string& hash);

 private:
  struct Cached {
    Principal principal;
    std::optional<core::Time> expires;
  };

  store::Store& store_;
  const Clock& clock_;
  std::mutex mutex_;
  std::map<std::string, Cached, std::less<>> cache_;  // by hash
  // Bumped by each Forget: a lookup caches its answer only if no Forget
  // came between its store read and its insert.
  uint64_t forgets_ = 0;
};

}  // namespace berth::server
