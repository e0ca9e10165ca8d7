// The team-queue sections of the server's TOML configuration
// (deploy/berth.toml documents every key):
//
//   [[queues]]
//   name = "vision"
//   parent = ""                       # a top-level queue
//   guaranteed_gpus = 64
//   ceiling_gpus = 128                # optional
//   default = false                   # jobs naming no queue go here
//   shares = 1                        # fair-share shares among its siblings
//   max_gpus_per_user = 8             # GPUs one user may have running here
//   max_running_jobs_per_user = 4
//   max_priority = 100                # highest priority a non-admin may give
//   max_time_s = 86400                # longest time limit; also the default one
//   allow_users = ["alice"]           # who may submit; both empty: everyone
//   allow_groups = ["cv-team"]        # Unix groups, through NSS on the server host
//   default_memory_per_gpu_mib = 32768  # memory of a job asking none, per GPU
//   default_memory_per_cpu_mib = 4096   # ... per CPU, for a job without GPUs
//                                       # (core/default_memory.h; Slurm's
//                                       # DefMemPerGPU and DefMemPerCPU)
//
//   [[users]]                         # fair-share shares of users (optional)
//   name = "alice"
//   shares = 2                        # users not listed have 1
//
// Errors name the key by its path (`queues[1].max_priority: ...`); the
// queue tree's own checks (core::QuotaTree::Make) name the queue.
#pragma once

#include <toml++/toml.h>

#include <vector>

#include "common/status.h"
#include "core/cluster_state.h"
#include "core/quota.h"

namespace berth::server {

Result<std::vector<core::QueueSpec>> ParseQueueArray(const toml::array& array);
Result<core::ClusterState::UserShares> ParseUserArray(const toml::array& array);

}  // namespace berth::server
