// The token routes of the HTTP API (issue 27): issue (admins), list (admins
// every token, users their own) and revoke (admins any, users their own).
// Listings never carry a token's hash; the secret exists only in the answer
// that issued it.
#include <algorithm>

#include "common/time_format.h"
#include "server/http_api.h"
#include "server/spec_text.h"

namespace berth::server {

using spec_text::Quote;

using nlohmann::json;

namespace {

// The longest lifetime a token may be given: ten years.
constexpr int64_t kMaxExpiresInSeconds = int64_t{3650} * 86400;

json TokenJson(const store::TokenRecord& token, core::Time now) {
  return json{{"id", token.id},
              {"user", token.user},
              {"role", RoleName(token.role)},
              {"node", token.node},
              {"created", FormatRfc3339(token.created)},
              {"expires", token.expires ? json(FormatRfc3339(*token.expires)) : json(nullptr)},
              {"expired", token.expires.has_value() && now >= *token.expires},
              {"revoked", token.revoked}};
}

// What POST /api/v1/tokens asks for.
struct TokenRequest {
  std::string user;
  store::Role role = store::Role::kUser;
  std::string node;
  std::optional<core::Duration> expires_in;  // none: never expires
};

Result<TokenRequest> ParseTokenRequest(const std::string& text) {
  const json fields = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (fields.is_discarded()) return InvalidArgument("body: invalid JSON");
  if (!fields.is_object()) return InvalidArgument("body: expected an object");
  TokenRequest request;
  std::string role_name = "user";
  for (const auto& [key, value] : fields.items()) {
    if (key == "expires_in_s") {
      if (!value.is_number_integer() || value.get<int64_t>() < 1 ||
          value.get<int64_t>() > kMaxExpiresInSeconds) {
        return InvalidArgument("expires_in_s: expected whole seconds, 1.." +
                               std::to_string(kMaxExpiresInSeconds) + ", got " + value.dump());
      }
      request.expires_in = core::Duration::Seconds(value.get<int64_t>());
      continue;
    }
    if (key != "user" && key != "role" && key != "node") {
      return InvalidArgument(key + ": unknown field (known: user, role, node, expires_in_s)");
    }
    if (!value.is_string()) return InvalidArgument(key + ": expected a string");
    if (key == "user") {
      request.user = value;
    } else if (key == "role") {
      role_name = value;
    } else {
      request.node = value;
    }
  }
  std::optional<store::Role> role = ParseRole(role_name);
  if (!role)
    return InvalidArgument("role: expected admin, user, agent or metrics, got " + Quote(role_name));
  request.role = *role;
  return request;
}

}  // namespace

void HttpApi::CreateToken(const Principal& who, const http::Request& request,
                          http::Response& response) {
  (void)who;
  Result<TokenRequest> asked = ParseTokenRequest(request.body);
  if (!asked.ok()) return Fail(response, asked.status());
  const core::Time now = clock_.Now();
  Result<IssuedToken> issued = IssueToken(asked->user, asked->role, asked->node, now);
  if (!issued.ok()) return Fail(response, issued.status());
  if (asked->expires_in) issued->record.expires = now + *asked->expires_in;
  if (Status stored = store_.PutToken(issued->record); !stored.ok()) {
    return Fail(response, stored);
  }
  json body = TokenJson(issued->record, now);
  body["token"] = issued->token;
  Json(response, 201, body);
}

void HttpApi::ListTokens(const Principal& who, const http::Request& request,
                         http::Response& response) {
  (void)request;
  Result<std::vector<store::TokenRecord>> tokens = store_.ListTokens();
  if (!tokens.ok()) return Fail(response, tokens.status());
  const core::Time now = clock_.Now();
  json out = json::array();
  for (const store::TokenRecord& token : *tokens) {
    if (who.admin() || token.user == who.user) out.push_back(TokenJson(token, now));
  }
  Json(response, 200, json{{"tokens", out}});
}

// Revoking a revoked token answers 200 again, so a retry is safe. The caller's
// own token may be revoked: the request already passed authentication.
void HttpApi::RevokeToken(const Principal& who, const http::Request& request,
                          http::Response& response) {
  const std::string id = request.matches[1];
  Result<std::vector<store::TokenRecord>> tokens = store_.ListTokens();
  if (!tokens.ok()) return Fail(response, tokens.status());
  auto token = std::find_if(tokens->begin(), tokens->end(),
                            [&](const store::TokenRecord& t) { return t.id == id; });
  if (token == tokens->end()) return Fail(response, NotFound("token " + id + ": no such token"));
  if (!who.admin() && token->user != who.user) {
    return Fail(response, Status(StatusCode::kPermissionDenied,
                                 "token " + id + ": only its user or an admin may revoke it"));
  }
  if (!token->revoked) {
    // The server issues an admin token only to an empty database: revoking
    // the last one that works would leave nobody able to issue another.
    const core::Time now = clock_.Now();
    const auto works_as_admin = [&](const store::TokenRecord& t) {
      return t.role == store::Role::kAdmin && !t.revoked && !(t.expires && now >= *t.expires);
    };
    if (works_as_admin(*token) &&
        std::count_if(tokens->begin(), tokens->end(), works_as_admin) == 1) {
      return Fail(response, FailedPrecondition("token " + id +
                                               ": the last admin token that works; issue "
                                               "another (berth token create --role admin) first"));
    }
    token->revoked = true;
    if (Status stored = store_.PutToken(*token); !stored.ok()) return Fail(response, stored);
    authenticator_.Forget(token->hash);
  }
  Json(response, 200, json{{"id", id}, {"revoked", true}});
}

}  // namespace berth::server
