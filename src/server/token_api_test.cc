// Issue 27, item 5: tokens are listed (admins: all; users: their own),
// revoked and may expire; a revoked or expired token is refused on the very
// next request, on every route, agents' heartbeats included.
#include <algorithm>
#include <string>
#include <vector>

#include "common/time_format.h"
#include "server/api_test_fixture.h"

namespace berth::server::api_testing {
namespace {

class TokenApiTest : public ApiTest {
 protected:
  // POST /api/v1/tokens as the admin; the answer's body (token, id, ...).
  json Issue(const std::string& user, const std::string& role, json extra = json::object()) {
    extra["user"] = user;
    extra["role"] = role;
    Reply reply = Admin().Post("/api/v1/tokens", extra);
    EXPECT_EQ(reply.status, 201) << reply.body.dump();
    return reply.body;
  }

  static std::vector<std::string> Users(const Reply& listing) {
    std::vector<std::string> users;
    for (const json& token : listing.body["tokens"]) users.push_back(token["user"]);
    return users;
  }
};

TEST_F(TokenApiTest, AdminsListEveryTokenAndUsersTheirOwnWithoutSecrets) {
  const json alice = Issue("alice", "user");
  Issue("bob", "user");
  Client alice_client = As(alice["token"]);

  Reply all = Admin().Get("/api/v1/tokens");
  ASSERT_EQ(all.status, 200) << all.body.dump();
  std::vector<std::string> users = Users(all);
  std::sort(users.begin(), users.end());
  EXPECT_EQ(users, (std::vector<std::string>{"admin", "alice", "bob"}));

  Reply own = alice_client.Get("/api/v1/tokens");
  ASSERT_EQ(own.status, 200) << own.body.dump();
  ASSERT_EQ(own.body["tokens"].size(), 1u) << own.body.dump();
  const json& listed = own.body["tokens"][0];
  EXPECT_EQ(listed["id"], alice["id"]);
  EXPECT_EQ(listed["role"], "user");
  EXPECT_EQ(listed["revoked"], false);
  EXPECT_TRUE(listed["expires"].is_null());
  EXPECT_THAT(listed["created"].get<std::string>(), StartsWith("2023-11-14T"));
  for (const json& token : all.body["tokens"]) {
    EXPECT_FALSE(token.contains("hash") || token.contains("token")) << token.dump();
  }
}

TEST_F(TokenApiTest, ARevokedTokenIsRefusedOnItsVeryNextRequest) {
  const json alice = Issue("alice", "user");
  Client alice_client = As(alice["token"]);
  ASSERT_EQ(alice_client.Get("/api/v1/jobs").status, 200);  // now cached

  Reply revoked = Admin().Delete("/api/v1/tokens/" + alice["id"].get<std::string>());
  ASSERT_EQ(revoked.status, 200) << revoked.body.dump();
  EXPECT_EQ(revoked.body, (json{{"id", alice["id"]}, {"revoked", true}}));
  Reply refused = alice_client.Get("/api/v1/jobs");
  EXPECT_EQ(refused.status, 401);
  EXPECT_THAT(refused.body["error"]["message"].get<std::string>(), HasSubstr("revoked"));
  EXPECT_EQ(alice_client.Post("/api/v1/jobs", json{{"command", {"true"}}}).status, 401);
  Reply listing = Admin().Get("/api/v1/tokens");
  for (const json& token : listing.body["tokens"]) {
    EXPECT_EQ(token["revoked"], token["id"] == alice["id"]) << token.dump();
  }
  // Revoking it again is not an error: a retry after a lost answer is safe.
  EXPECT_EQ(Admin().Delete("/api/v1/tokens/" + alice["id"].get<std::string>()).status, 200);
}

TEST_F(TokenApiTest, UsersRevokeOnlyTheirOwnTokensIncludingTheOneTheyUse) {
  const json alice = Issue("alice", "user");
  const json bob = Issue("bob", "user");
  Client alice_client = As(alice["token"]);
  Client bob_client = As(bob["token"]);

  Reply theirs = bob_client.Delete("/api/v1/tokens/" + alice["id"].get<std::string>());
  EXPECT_EQ(theirs.status, 403) << theirs.body.dump();
  EXPECT_EQ(alice_client.Get("/api/v1/jobs").status, 200);
  EXPECT_EQ(bob_client.Delete("/api/v1/tokens/0123456789ab").status, 404);

  EXPECT_EQ(alice_client.Delete("/api/v1/tokens/" + alice["id"].get<std::string>()).status, 200);
  EXPECT_EQ(alice_client.Get("/api/v1/tokens").status, 401);
  EXPECT_EQ(bob_client.Get("/api/v1/jobs").status, 200);
}

TEST_F(TokenApiTest, TheLastAdminTokenThatWorksCannotBeRevoked) {
  std::string bootstrap;
  const Reply listing = Admin().Get("/api/v1/tokens");
  for (const json& token : listing.body["tokens"]) {
    if (token["role"] == "admin") bootstrap = token["id"];
  }
  ASSERT_FALSE(bootstrap.empty());
  Reply last = Admin().Delete("/api/v1/tokens/" + bootstrap);
  EXPECT_EQ(last.status, 409) << last.body.dump();
  EXPECT_THAT(last.body.dump(), HasSubstr("the last admin token that works"));
  // One that has expired does not count.
  Issue("ops", "admin", json{{"expires_in_s", 60}});
  clock_.Advance(core::Duration::Seconds(61));
  EXPECT_EQ(Admin().Delete("/api/v1/tokens/" + bootstrap).status, 409);
  // With another that works, the first may go; then that one is the last.
  const json second = Issue("ops", "admin");
  EXPECT_EQ(Admin().Delete("/api/v1/tokens/" + bootstrap).status, 200);
  Client ops = As(second["token"]);
  EXPECT_EQ(ops.Delete("/api/v1/tokens/" + second["id"].get<std::string>()).status, 409);
  EXPECT_EQ(ops.Get("/api/v1/tokens").status, 200);
}

TEST_F(TokenApiTest, AnAgentWhoseTokenIsRevokedGets401OnItsNextHeartbeat) {
  Client agent = RegisterAgent("n0", 1);
  ASSERT_EQ(Heartbeat(agent, "n0", {}).status, 200);
  const Reply listing = Admin().Get("/api/v1/tokens");
  std::string agent_id;
  for (const json& token : listing.body["tokens"]) {
    if (token["node"] == "n0") agent_id = token["id"];
  }
  ASSERT_FALSE(agent_id.empty()) << listing.body.dump();
  ASSERT_EQ(Admin().Delete("/api/v1/tokens/" + agent_id).status, 200);
  EXPECT_EQ(Heartbeat(agent, "n0", {}).status, 401);
}

TEST_F(TokenApiTest, ATokenExpiresByTheServersClockEvenWhenCached) {
  const json alice = Issue("alice", "user", json{{"expires_in_s", 60}});
  EXPECT_EQ(alice["expires"], FormatRfc3339(clock_.Now() + core::Duration::Seconds(60)));
  Client alice_client = As(alice["token"]);
  ASSERT_EQ(alice_client.Get("/api/v1/jobs").status, 200);  // now cached

  clock_.Advance(core::Duration::Seconds(59));
  EXPECT_EQ(alice_client.Get("/api/v1/jobs").status, 200);
  clock_.Advance(core::Duration::Seconds(1));
  Reply refused = alice_client.Get("/api/v1/jobs");
  EXPECT_EQ(refused.status, 401);
  EXPECT_THAT(refused.body["error"]["message"].get<std::string>(), HasSubstr("expired"));
  Reply listing = Admin().Get("/api/v1/tokens");
  for (const json& token : listing.body["tokens"]) {
    EXPECT_EQ(token["expired"], token["id"] == alice["id"]) << token.dump();
  }
}

TEST_F(TokenApiTest, ABadExpiryIsA400NamingTheField) {
  for (const json& bad : {json(0), json(-5), json(1.5), json("30d"), json(nullptr),
                          json(int64_t{3650} * 86400 + 1)}) {
    Reply reply = Admin().Post("/api/v1/tokens",
                               json{{"user", "alice"}, {"role", "user"}, {"expires_in_s", bad}});
    EXPECT_EQ(reply.status, 400) << bad.dump();
    EXPECT_THAT(reply.body["error"]["message"].get<std::string>(), StartsWith("expires_in_s: "))
        << bad.dump();
  }
  EXPECT_EQ(Admin().Get("/api/v1/tokens").body["tokens"].size(), 1u);  // the admin's only
}

}  // namespace
}  // namespace berth::server::api_testing
