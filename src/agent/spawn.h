// Starting a supervisor so that it does not depend on the agent: it must
// keep running, and keep its task running, when the agent exits or crashes.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/status.h"

namespace berth::agent {

struct SpawnRequest {
  std::vector<std::string> argv;  // argv[0] is a path (no PATH search)
  std::string log_path;           // the child's stdout and stderr (appended)
};

// Starts argv[0] with posix_spawn, which creates the child with
// clone(CLONE_VM | CLONE_VFORK): the agent's page tables are not copied and
// no fork handlers run, so a start costs the same however large the agent
// is (fork-based starts copied them twice; on a host where page-table
// writes trap to the hypervisor that was most of a start). The child gets
// a new session (no terminal, no share of the agent's process group, so not
// killed with it), stdin from /dev/null, the log as stdout/stderr, no other
// descriptors (the agent's listening socket must not outlive it), default
// signal dispositions and SIGTERM/SIGINT/SIGHUP/SIGCHLD blocked (a stop
// sent while it starts stays pending until it is ready). A failed exec is
// returned as an error. Safe to call from a multi-threaded process.
//
// The child is the caller's child: reap it (ReapIfExited) or it stays a
// zombie until the caller exits. When the caller exits first it is
// reparented and lives on.
Result<pid_t> SpawnDetached(const SpawnRequest& request);

// Reaps `pid`, a child from SpawnDetached, if it has exited; true once it
// is reaped (or is no child of ours). Never blocks.
bool ReapIfExited(pid_t pid);

}  // namespace berth::agent
