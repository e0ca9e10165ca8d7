#include "agent/account.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace berth::agent {
namespace {

// Room for one passwd entry's strings (getpw*_r).
std::vector<char> PasswdBuffer() {
  const long suggested = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  return std::vector<char>(suggested > 0 ? static_cast<size_t>(suggested) : 16384);
}

}  // namespace

Result<Account> LookupAccount(const std::string& name) {
  std::vector<char> buffer = PasswdBuffer();
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
  Account account;
  account.name = entry.pw_name;
  account.uid = entry.pw_uid;
  account.gid = entry.pw_gid;
  account.home = entry.pw_dir != nullptr ? entry.pw_dir : "";
  account.shell = entry.pw_shell != nullptr && *entry.pw_shell != '\0' ? entry.pw_shell : "/bin/sh";
  int count = 32;
  std::vector<gid_t> groups(static_cast<size_t>(count));
  while (::getgrouplist(name.c_str(), account.gid, groups.data(), &count) < 0) {
    groups.resize(static_cast<size_t>(count) > groups.size() ? static_cast<size_t>(count)
                                                             : groups.size() * 2);
    count = static_cast<int>(groups.size());
  }
  groups.resize(static_cast<size_t>(count));
  account.groups = std::move(groups);
  return account;
}

Result<Account> ResolveRunAs(const std::string& user, const RunAsPolicy& policy) {
  if (user.empty()) {
    return InvalidArgument("the task names no user to run as (node " + policy.node + ")");
  }
  Result<Account> account = LookupAccount(user);
  if (account.status().code() == StatusCode::kNotFound) {
    return NotFound("user '" + user + "' has no account on node " + policy.node);
  }
  if (!account.ok()) return account.status();
  if (account->uid == 0 && !policy.allow_root) {
    return Status(StatusCode::kPermissionDenied,
                  "jobs may not run as root on node " + policy.node +
                      " (its agent allows them with --allow-root-jobs)");
  }
  if (policy.agent_uid != 0 && account->uid != policy.agent_uid) {
    return Status(StatusCode::kPermissionDenied,
                  "the agent on node " + policy.node + " runs as '" + policy.agent_user +
                      "', not root, and starts tasks only for '" + policy.agent_user +
                      "', not for '" + user + "'");
  }
  return account;
}

std::string EffectiveUserName() {
  const uid_t uid = ::geteuid();
  std::vector<char> buffer = PasswdBuffer();
  passwd entry{};
  passwd* found = nullptr;
  if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr) {
    return entry.pw_name;
  }
  return "uid " + std::to_string(uid);
}

RunAsPolicy ThisProcessPolicy(std::string node, bool allow_root) {
  RunAsPolicy policy;
  policy.node = std::move(node);
  policy.agent_uid = ::geteuid();
  policy.agent_user = EffectiveUserName();
  policy.allow_root = allow_root;
  return policy;
}

}  // namespace berth::agent
