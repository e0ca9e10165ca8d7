// Token hashing: stores keep only SHA-256 hashes of tokens' secrets, so the
// hash must stay exactly SHA-256 of the secret part for tokens issued by any
// earlier version to keep working.
#include "server/auth.h"

#include <gtest/gtest.h>

namespace berth::server {
namespace {

TEST(AuthTest, ATokensHashIsTheSha256OfItsSecretPart) {
  // FIPS 180-2's test vector: SHA-256("abc").
  Result<std::string> hash = HashToken("berth_tok1_abc");
  ASSERT_TRUE(hash.ok()) << hash.status().ToString();
  EXPECT_EQ(*hash, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(AuthTest, AnIssuedTokenHashesToItsStoredRecord) {
  Result<IssuedToken> issued = IssueToken("alice", store::Role::kUser, "", core::Time{});
  ASSERT_TRUE(issued.ok()) << issued.status().ToString();
  Result<std::string> hash = HashToken(issued->token);
  ASSERT_TRUE(hash.ok()) << hash.status().ToString();
  EXPECT_EQ(*hash, issued->record.hash);
  EXPECT_EQ(hash->size(), 64u);
}

TEST(AuthTest, OnlyTokensOfTheBerthFormHash) {
  for (const char* token :
       {"", "abc", "berth_", "berth_id", "berth_id_", "berth__secret", "other_id_secret"}) {
    EXPECT_FALSE(HashToken(token).ok()) << token;
  }
}

}  // namespace
}  // namespace berth::server
