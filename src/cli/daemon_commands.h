// `berth` is the client; the daemons and the simulator live in `berthd`.
//
// Users run client commands (submit, queue, why, ...) many times a minute,
// often from scripts, so `berth` links only what they need and starts in a
// few milliseconds. The daemons (server, dev, agent) and the simulator link
// the store (SQLite, libpq and the twenty libraries it brings), the
// scheduler and tcmalloc, whose set-up alone took 40% of every CLI call
// when it was all one binary (docs/performance.md, "What limits Berth
// here"). They live in `berthd`, installed beside `berth`, and `berth
// server ...` execs `berthd server ...`, as `git foo` runs `git-foo`: exec
// keeps the process id, so whoever started `berth server` stops it by
// that pid, and the arguments (argv[0] included) reach berthd unchanged.
#pragma once

#include <CLI/CLI.hpp>
#include <string_view>

namespace berth::cli {

struct DaemonCommand {
  const char* name;
  const char* description;
};
inline constexpr DaemonCommand kDaemonCommands[] = {
    {"server", "Run the control plane (API, scheduler)"},
    {"dev", "Run a local cluster: the server with SQLite in a data dir, and N agents"},
    {"agent", "Run the node agent: discover GPUs, run the tasks the server assigns"},
    {"sim", "Replay a cluster trace through the scheduler core and compare policies"},
};

// The description of a command of kDaemonCommands (for berthd's own --help).
const char* DaemonDescription(std::string_view name);

// In `berth`: when argv[1] names a daemon command, execs berthd from beside
// this binary with the same arguments; exits with a message naming the
// path if that fails. Returns when argv[1] is anything else.
void ExecDaemonIfAsked(int argc, char** argv);

// In `berth`: lists the daemon commands in --help (they never get here).
void AddDaemonCommands(CLI::App& app);

}  // namespace berth::cli
