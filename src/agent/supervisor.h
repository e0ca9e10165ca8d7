// The per-task supervisor: a small process between the agent and one task.
//
// The agent starts it detached (spawn.h: its own session, so it outlives the
// agent and a Ctrl-C to the agent's terminal), and it:
//   - runs the task from spec.json in its own process group, stdout and
//     stderr to the task's log, in the job's environment and working dir;
//   - is the child subreaper of everything the task starts, so no
//     descendant escapes by double-forking: orphans come back to it;
//   - on SIGTERM (the agent's stop request; the grace period is in the
//     `stop` file) or at the time limit: SIGTERM to the task's process
//     group, its session and every child, then SIGKILL after the grace
//     period, repeated until nothing is left;
//   - with a time limit and an early signal (--signal=[B:]SIG[@secs]): SIG
//     that long before the limit, once, to the task's processes (B: its
//     main process only, on task 0);
//   - on SIGUSR1 (the agent rewrote the `signals` file, task_dir.h): each
//     signal of the file it has not delivered yet, the same way;
//   - when the task's main process exits: stops whatever it left behind
//     the same way (a few seconds' grace at most), then writes exit.json
//     with the main process's exit code or signal, and exits.
// An agent that is not the task's parent cannot wait for it; exit.json is
// how a restarted agent learns how a task ended while it was away.
#pragma once

#include <string>

namespace berth::agent {

// The subcommand the agent execs to become a supervisor: `<binary>
// supervise-task <task dir>` (berthd and agent_test's main route it to
// RunSupervisor).
inline constexpr char kSuperviseCommand[] = "supervise-task";

// Runs one task to its end; returns the supervisor's exit code (0 when it
// recorded an outcome, which may be the task's failure).
int RunSupervisor(const std::string& task_dir);

}  // namespace berth::agent
