// The Unix groups of a user, as the server host's NSS knows them (files,
// LDAP through sssd...): what a queue's `allow_groups` is matched against.
#pragma once

#include <string>
#include <vector>

namespace berth::server {

// The names of the user's groups: its primary group and every group that
// lists it (getgrouplist). Empty when the host knows no such user. Blocks
// on NSS: never call it under the controller's lock.
std::vector<std::string> UnixGroupsOf(const std::string& user);

}  // namespace berth::server
