#include "server/auth.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <array>
#include <cctype>

#include "common/check.h"
#include "common/time_format.h"
#include "server/spec_text.h"

namespace berth::server {

using spec_text::Quote;
namespace {

constexpr std::string_view kPrefix = "berth_";

std::string Hex(const unsigned char* bytes, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (size_t i = 0; i < size; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 0xf]);
  }
  return out;
}

Result<std::string> RandomHex(size_t bytes) {
  std::array<unsigned char, 64> buffer{};
  if (bytes > buffer.size() || RAND_bytes(buffer.data(), static_cast<int>(bytes)) != 1) {
    return Internal("token: the system random generator failed");
  }
  return Hex(buffer.data(), bytes);
}

std::string Sha256Hex(std::string_view text) {
  // Every request hashes its token. Fetched once: with EVP_sha256(),
  // OpenSSL 3 looks the implementation up in its providers on each call
  // (a lock and a table walk, most of the hash's cost on a cold thread).
  static EVP_MD* const kFetched = EVP_MD_fetch(nullptr, "SHA2-256", nullptr);
  const EVP_MD* sha256 = kFetched != nullptr ? kFetched : EVP_sha256();
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  const int hashed = EVP_Digest(text.data(), text.size(), digest.data(), &size, sha256, nullptr);
  // A hash that failed must not read as the empty hash, which every other
  // failure would share: stop instead.
  BERTH_CHECK(hashed == 1 && size > 0) << "SHA-256 failed";
  return Hex(digest.data(), size);
}

bool ValidUser(std::string_view user) {
  if (user.empty() || user.size() > 64) return false;
  for (char c : user) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-' &&
        c != '@') {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string_view RoleName(store::Role role) {
  switch (role) {
    case store::Role::kAdmin:
      return "admin";
    case store::Role::kUser:
      return "user";
    case store::Role::kAgent:
      return "agent";
    case store::Role::kMetrics:
      return "metrics";
  }
  return "unknown";
}

std::optional<store::Role> ParseRole(std::string_view name) {
  for (store::Role role :
       {store::Role::kAdmin, store::Role::kUser, store::Role::kAgent, store::Role::kMetrics}) {
    if (RoleName(role) == name) return role;
  }
  return std::nullopt;
}

Result<IssuedToken> IssueToken(std::string user, store::Role role, std::string node,
                               core::Time now) {
  if (!ValidUser(user)) {
    return InvalidArgument("user: 1..64 characters of letters, digits and . _ - @, got " +
                           Quote(user));
  }
  if (role == store::Role::kAgent && !ValidUser(node)) {
    return InvalidArgument("node: an agent token needs the node's name, got " + Quote(node));
  }
  Result<std::string> id = RandomHex(6);
  Result<std::string> secret = RandomHex(32);
  if (!id.ok()) return id.status();
  if (!secret.ok()) return secret.status();
  IssuedToken issued;
  issued.token = std::string(kPrefix) + *id + "_" + *secret;
  issued.record.id = *id;
  issued.record.hash = Sha256Hex(*secret);
  issued.record.user = std::move(user);
  issued.record.role = role;
  issued.record.node = std::move(node);
  issued.record.created = now;
  return issued;
}

Result<std::string> HashToken(std::string_view token) {
  if (!token.starts_with(kPrefix)) return InvalidArgument("token: not a Berth token");
  const std::string_view rest = token.substr(kPrefix.size());
  const size_t underscore = rest.find('_');
  if (underscore == std::string_view::npos || underscore == 0 || underscore + 1 >= rest.size()) {
    return InvalidArgument("token: not a Berth token");
  }
  return Sha256Hex(rest.substr(underscore + 1));
}

Result<Principal> Authenticator::Authenticate(std::string_view header) {
  constexpr std::string_view kBearer = "Bearer ";
  if (!header.starts_with(kBearer)) {
    return Status(StatusCode::kUnauthenticated,
                  "authorization: expected 'Authorization: Bearer <token>'");
  }
  Result<std::string> hash = HashToken(header.substr(kBearer.size()));
  if (!hash.ok()) return Status(StatusCode::kUnauthenticated, hash.status().message());
  std::optional<Cached> cached;
  uint64_t forgets_before_read = 0;
  {
    std::lock_guard lock(mutex_);
    if (auto it = cache_.find(*hash); it != cache_.end()) cached = it->second;
    forgets_before_read = forgets_;
  }
  if (!cached) {
    Result<store::TokenRecord> record = store_.FindTokenByHash(*hash);
    if (!record.ok() || record->revoked) {
      return Status(StatusCode::kUnauthenticated, "authorization: unknown or revoked token");
    }
    cached = Cached{Principal{record->user, record->role, record->node}, record->expires};
    std::lock_guard lock(mutex_);
    if (forgets_ == forgets_before_read) cache_.emplace(*hash, *cached);
  }
  // Checked on every request, cached or not: expiry needs no event to act.
  if (cached->expires && clock_.Now() >= *cached->expires) {
    return Status(StatusCode::kUnauthenticated,
                  "authorization: the token expired at " + FormatRfc3339(*cached->expires));
  }
  return cached->principal;
}

void Authenticator::Forget(const std::string& hash) {
  std::lock_guard lock(mutex_);
  cache_.erase(hash);
  ++forgets_;
}

}  // namespace berth::server
