#include "agent/account.h"

#include <unistd.h>

namespace berth::agent {

Result<Account> ResolveRunAs(const std::string& user, const RunAsPolicy& policy) {
  if (user.empty()) {
    return InvalidArgument("the task names no user to run as (node " + policy.node + ")");
  }
  Result<Account> account = LookupUnixAccount(user);
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

RunAsPolicy ThisProcessPolicy(std::string node, bool allow_root) {
  RunAsPolicy policy;
  policy.node = std::move(node);
  policy.agent_uid = ::geteuid();
  policy.agent_user = EffectiveUserName();
  policy.allow_root = allow_root;
  return policy;
}

}  // namespace berth::agent
