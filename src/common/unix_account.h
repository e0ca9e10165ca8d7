// Unix accounts as this host's NSS knows them (files, LDAP through sssd...):
// a user's uid, primary group, every group it belongs to and its passwd
// entry. The agent runs tasks as them; the server matches queues'
// `allow_groups` against them. Blocking calls (NSS may ask a directory
// server): never under a lock others wait on.
#pragma once

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "common/status.h"

namespace berth {

struct UnixAccount {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;              // primary group
  std::vector<gid_t> groups;  // every group it belongs to, the primary one included
  std::string home;
  std::string shell;
};

namespace unix_account_detail {

// Room for one entry's strings (the reentrant NSS calls): what the host
// suggests, or enough for most; the callers grow it on ERANGE.
inline std::vector<char> EntryBuffer(int name) {
  const long suggested = ::sysconf(name);
  return std::vector<char>(suggested > 0 ? static_cast<size_t>(suggested) : 16384);
}

inline UnixAccount FromEntry(const passwd& entry) {
  UnixAccount account;
  account.name = entry.pw_name;
  account.uid = entry.pw_uid;
  account.gid = entry.pw_gid;
  account.home = entry.pw_dir != nullptr ? entry.pw_dir : "";
  account.shell = entry.pw_shell != nullptr && *entry.pw_shell != '\0' ? entry.pw_shell : "/bin/sh";
  int count = 32;
  std::vector<gid_t> groups(static_cast<size_t>(count));
  while (::getgrouplist(account.name.c_str(), account.gid, groups.data(), &count) < 0) {
    groups.resize(std::max(static_cast<size_t>(count), groups.size() * 2));  // count: needed
    count = static_cast<int>(groups.size());
  }
  groups.resize(static_cast<size_t>(count));
  account.groups = std::move(groups);
  return account;
}

}  // namespace unix_account_detail

// The account named `name`; NotFound when there is none.
inline Result<UnixAccount> LookupUnixAccount(const std::string& name) {
  std::vector<char> buffer = unix_account_detail::EntryBuffer(_SC_GETPW_R_SIZE_MAX);
  passwd entry{};
  passwd* found = nullptr;
  int error = 0;
  while ((error = ::getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found)) ==
         ERANGE) {
    buffer.resize(buffer.size() * 2);
  }
  if (error != 0) {
    return Unavailable("cannot look up user '" + name + "': " + std::strerror(error));
  }
  if (found == nullptr) return NotFound("no account named '" + name + "'");
  return unix_account_detail::FromEntry(entry);
}

// The name of this process's effective user ("uid N" when NSS has none).
inline std::string EffectiveUserName() {
  std::vector<char> buffer = unix_account_detail::EntryBuffer(_SC_GETPW_R_SIZE_MAX);
  passwd entry{};
  passwd* found = nullptr;
  const uid_t uid = ::geteuid();
  if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr) {
    return entry.pw_name;
  }
  return "uid " + std::to_string(uid);
}

// The names of `gids` (sorted, each once); a gid NSS cannot name is left out.
inline std::vector<std::string> GroupNames(const std::vector<gid_t>& gids) {
  std::vector<std::string> names;
  std::vector<char> buffer = unix_account_detail::EntryBuffer(_SC_GETGR_R_SIZE_MAX);
  for (gid_t gid : gids) {
    group entry{};
    group* found = nullptr;
    int error = 0;
    while ((error = ::getgrgid_r(gid, &entry, buffer.data(), buffer.size(), &found)) == ERANGE) {
      buffer.resize(buffer.size() * 2);
    }
    if (error == 0 && found != nullptr) names.emplace_back(found->gr_name);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace berth
