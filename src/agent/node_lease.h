// The node lease on the node's side (issue 32; protocol/desired_state.h).
//
// The agent holds a lease from the server: every answer to a heartbeat (or
// registration) grants a duration, counted from the monotonic time at which
// the agent SENT that request. After each renewal the agent writes the
// lease's end to STATE/lease as a CLOCK_MONOTONIC reading (with the boot it
// belongs to), atomically; each supervisor reads it about once a second,
// so that when the agent is gone (killed, hung, cut off from the server)
// the tasks still stop once the lease has ended: by then the server may
// have started their jobs elsewhere.
//
//   STATE/lease:  "<CLOCK_MONOTONIC nanoseconds> <boot id>\n"
//
// No file (or one of another boot): no lease is known, and nothing is
// stopped for it (an agent whose server grants no leases).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "common/status.h"

namespace berth::agent {

inline constexpr char kLeaseFile[] = "lease";

// STATE/lease
std::string LeasePath(const std::string& state_dir);

// The lease ends at `end` (std::chrono::steady_clock is CLOCK_MONOTONIC).
Status WriteLeaseEnd(const std::string& path, std::chrono::steady_clock::time_point end);
// No lease: removes the file.
Status RemoveLease(const std::string& path);
// The lease's end, or nullopt when none is known (no file, unreadable, or
// written in another boot).
std::optional<std::chrono::steady_clock::time_point> ReadLeaseEnd(const std::string& path);

// What a node gives its tasks, once its lease ended, between SIGTERM and
// SIGKILL (the job's grace if shorter): protocol::kLeaseStopWithin counts
// on it.
inline constexpr std::chrono::seconds kLeaseStopGrace{5};

}  // namespace berth::agent
