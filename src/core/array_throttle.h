// Slurm's array throttle (`--array=0-99%4`): at most N elements of one job
// array run at once. The elements are separate jobs that share an array id
// and the limit (JobSpec::array_limit); a cycle starts from the running
// elements the state counts and adds its own starts (and takes out its
// preemptions) as it decides them, as UserLimitUsage does, so two elements
// started in one cycle cannot together exceed the limit. An element held
// back waits with ReasonCode::kArrayLimit (Slurm's JobArrayTaskLimit) and
// never blocks the jobs behind it: what holds it is its siblings, not GPUs.
#pragma once

#include <cstdint>
#include <map>

#include "core/cluster_state.h"
#include "core/job.h"

namespace berth::core {

class ArrayThrottle {
 public:
  // REQUIRES: `state` outlives this object and does not change meanwhile.
  explicit ArrayThrottle(const ClusterState& state) : running_(state.running_array_elements()) {}

  // Whether the job may start now: it belongs to no throttled array, or its
  // array has fewer running elements than its limit.
  bool Allows(const JobSpec& job) const;
  // A start (+) or a stop (-) decided this cycle.
  void Add(const JobSpec& job);
  void Remove(const JobSpec& job);

 private:
  const ClusterState::ArrayCounts& running_;
  std::map<JobId, int32_t> decided_;  // this cycle's starts minus its stops, per array
};

}  // namespace berth::core
