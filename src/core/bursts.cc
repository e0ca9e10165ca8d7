#include "core/bursts.h"

#include "common/check.h"

namespace berth::core {

Bursts::Bursts(BurstConfig config) : config_(config) {
  BERTH_CHECK(config_.gap >= Duration::Zero());
}

std::vector<BurstId> Bursts::Submitted(const JobSpec& spec) {
  std::vector<BurstId> gone;
  // A job requeued (preempted, its node lost) is submitted again: it stays
  // where it arrived.
  if (config_.gap == Duration::Zero() || !spec.name.empty() || member_of_.contains(spec.id)) {
    return gone;
  }
  const std::string key =
      spec.user + '|' + spec.queue + '|' + std::to_string(spec.total_gpu().value());
  auto [it, fresh] = open_.try_emplace(key);
  Open& open = it->second;
  // An old submission reported late (an ended job requeued by its owner)
  // arrived in a burst long gone: it joins none rather than today's.
  if (!fresh && open.last_submit - spec.submit_time > config_.gap) return gone;
  if (fresh || spec.submit_time - open.last_submit > config_.gap) {
    if (!fresh) {
      bursts_.at(open.burst).open = false;
      MaybeForget(open.burst, gone);
    }
    open.burst = ++next_;
    bursts_[open.burst];
  }
  open.last_submit = Max(open.last_submit, spec.submit_time);
  ++bursts_.at(open.burst).live;
  member_of_[spec.id] = open.burst;
  return gone;
}

void Bursts::Started(JobId job, Time now) {
  const std::optional<BurstId> burst = Of(job);
  if (!burst) return;
  Burst& state = bursts_.at(*burst);
  state.probed = true;
  state.running_since.try_emplace(job, now);
}

std::vector<BurstId> Bursts::Ended(JobId job) {
  std::vector<BurstId> gone;
  auto it = member_of_.find(job);
  if (it == member_of_.end()) return gone;
  const BurstId burst = it->second;
  member_of_.erase(it);
  Burst& state = bursts_.at(burst);
  state.running_since.erase(job);
  --state.live;
  MaybeForget(burst, gone);
  return gone;
}

void Bursts::MaybeForget(BurstId burst, std::vector<BurstId>& gone) {
  auto it = bursts_.find(burst);
  if (it == bursts_.end() || it->second.open || it->second.live > 0) return;
  bursts_.erase(it);
  gone.push_back(burst);
}

std::optional<BurstId> Bursts::Of(JobId job) const {
  auto it = member_of_.find(job);
  if (it == member_of_.end()) return std::nullopt;
  return it->second;
}

bool Bursts::Probed(BurstId burst) const {
  auto it = bursts_.find(burst);
  return it != bursts_.end() && it->second.probed;
}

Duration Bursts::LongestRunning(BurstId burst, Time now) const {
  auto it = bursts_.find(burst);
  if (it == bursts_.end() || it->second.running_since.empty()) return Duration::Zero();
  Time earliest = now;
  for (const auto& [job, since] : it->second.running_since) earliest = Min(earliest, since);
  return Max(Duration::Zero(), now - earliest);
}

}  // namespace berth::core
