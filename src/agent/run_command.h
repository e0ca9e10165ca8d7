// Running a short helper program to its end and keeping what it printed:
// the container runtime's `info`, `image exists`, `pull`, `inspect` and `rm`
// (container_runtime.h, supervisor.cc). Blocking; for programs that end by
// themselves, bounded by a timeout after which the program is killed.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace berth::agent {

struct CommandResult {
  // The exit code; -1 when it could not be started, was killed by a signal
  // or ran past the timeout (`output` says which).
  int exit_code = -1;
  std::string output;     // stdout and stderr together, at most the last 64 KiB
  bool given_up = false;  // killed because `give_up` said so
};

// Runs argv (argv[0] looked up in PATH) with this process's environment,
// stdin from /dev/null, and waits for exactly that child (other children
// of the caller are left for it to reap). `give_up`, when given, is asked
// about once a second while the program runs: true kills it (a pull of an
// image, which can take an hour, of a task that was stopped meanwhile).
CommandResult RunCommand(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                         const std::function<bool()>& give_up = nullptr);

// The last non-empty line of `output` ("Error: ... not found"), for messages.
std::string LastLine(const std::string& output);

}  // namespace berth::agent
