// MASTER_PORT for a job's rendezvous on its task 0's node (torchrun's
// c10d store, torch.distributed's env:// init): a port no other live job
// on that node was given, so two jobs there never meet on one port.
#pragma once

#include <cstdint>
#include <set>

#include "core/ids.h"

namespace berth::server {

// Ports are given from [kFirstMasterPort, kEndMasterPort): below Linux's
// default ephemeral range (32768-60999), so that no connection's local
// port, which the kernel picks from that range, takes a job's port first.
inline constexpr int32_t kFirstMasterPort = 20000;
inline constexpr int32_t kEndMasterPort = 32768;

// The job's port: its preferred one (a hash of job and attempt, so that
// jobs spread over the range) unless `taken` (the ports of the node's other
// live jobs) holds it, then the next free one up, wrapping around. Pure and
// deterministic. REQUIRES: `taken` leaves a port free in the range.
int32_t ChooseMasterPort(core::JobId job, int32_t attempt, const std::set<int32_t>& taken);

}  // namespace berth::server
