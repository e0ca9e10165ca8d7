// Who a task runs as: the job's user, looked up on this node. As in Slurm,
// every node shares one uid space (NSS: the same /etc/passwd, LDAP, SSSD),
// so the name a token speaks for is an account here or nowhere.
//
// The agent (root on a real node) starts each task as that account; an
// agent that is not root can start tasks only as itself. Whether a task may
// run as root is the node operator's choice (--allow-root-jobs).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/status.h"
#include "common/unix_account.h"

namespace berth::agent {

using Account = UnixAccount;

struct RunAsPolicy {
  std::string node;         // for the messages
  uid_t agent_uid = 0;      // the agent's effective uid
  std::string agent_user;   // and its name (or "uid N")
  bool allow_root = false;  // tasks may run as uid 0
};

// The account a task of `user` runs as on this node, or why it cannot run
// here, as the sentence its job shows ("user 'bob' has no account on node
// n3"): no such account, root when root is not allowed, or another user
// than the agent's own when the agent is not root.
Result<Account> ResolveRunAs(const std::string& user, const RunAsPolicy& policy);

// The policy of an agent running as this process does.
RunAsPolicy ThisProcessPolicy(std::string node, bool allow_root);

}  // namespace berth::agent
