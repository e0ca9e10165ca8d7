// API authentication: bearer tokens, stored hashed, each with one role.
//
// A token reads "berth_<id>_<secret>": the id is public (listings, logs),
// the secret 32 random bytes in hex. Only SHA-256(secret) is stored, so a
// leaked database does not leak usable tokens.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

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
class Authenticator {
 public:
  explicit Authenticator(store::Store& store) : store_(store) {}

  // Unauthenticated (no, malformed or unknown token) or the principal.
  Result<Principal> Authenticate(std::string_view authorization_header);
  // Forgets cached tokens (after a revocation).
  void Invalidate();

 private:
  store::Store& store_;
  std::mutex mutex_;
  std::map<std::string, Principal, std::less<>> cache_;  // by hash
};

}  // namespace berth::server
