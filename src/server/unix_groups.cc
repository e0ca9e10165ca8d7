#include "server/unix_groups.h"

#include "common/unix_account.h"

namespace berth::server {

std::vector<std::string> UnixGroupsOf(const std::string& user) {
  Result<UnixAccount> account = LookupUnixAccount(user);
  if (!account.ok()) return {};
  return GroupNames(account->groups);
}

}  // namespace berth::server
