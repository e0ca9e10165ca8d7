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
  // Written (through a temporary file and rename) when exec fails, so the
  // failure is recorded like any other task outcome.
  std::string exec_failure_path;
  std::string exec_failure_content;
};

// Double-forks: the child forks the supervisor and exits at once, so the
// supervisor is reparented away from the agent (never the agent's zombie,
// and not killed with it). The supervisor gets a new session (no terminal,
// no share of the agent's process group), stdin from /dev/null, the log as
// stdout/stderr, no other descriptors (the agent's listening socket must not
// outlive it), default signal dispositions and SIGTERM/SIGINT/SIGHUP/SIGCHLD
// blocked (a stop sent while it starts stays pending until it is ready).
// Returns the supervisor's pid. Safe to call from a multi-threaded process:
// between fork and exec only async-signal-safe calls are made.
Result<pid_t> SpawnDetached(const SpawnRequest& request);

}  // namespace berth::agent
