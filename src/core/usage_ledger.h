// Decayed usage for fair share, as Slurm's PriorityDecayHalfLife: every
// GPU-second used counts half as much one half-life later.
//
// Completed run segments are charged when they end; the ongoing part of a
// running job is added at query time by the caller (RunningContribution), so
// the ledger never needs a timer. Values are doubles: this is a score, not
// resource accounting.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/resources.h"
#include "core/time.h"

namespace berth::core {

struct DecayedValue {
  double value = 0;  // decayed GPU-seconds as of `as_of`
  Time as_of;
};

class UsageLedger {
 public:
  explicit UsageLedger(Duration half_life);

  Duration half_life() const { return half_life_; }

  // Charges `gpus` held over [from, to] to the user and the queue.
  void Charge(std::string_view user, std::string_view queue, MilliGpu gpus, Time from, Time to);

  // Decayed GPU-seconds of completed segments, seen at `now`.
  double UserUsage(std::string_view user, Time now) const;
  double QueueUsage(std::string_view queue, Time now) const;
  // Decayed GPU-seconds of a run from `from` until `now`.
  double RunningContribution(MilliGpu gpus, Time from, Time now) const;

  // Queues and users ever charged, in name order.
  const std::map<std::string, DecayedValue, std::less<>>& queues() const { return by_queue_; }
  const std::map<std::string, DecayedValue, std::less<>>& users() const { return by_user_; }

 private:
  double Decay(Duration elapsed) const;
  void Add(std::map<std::string, DecayedValue, std::less<>>& table, std::string_view key,
           double amount, Time at);
  double Read(const std::map<std::string, DecayedValue, std::less<>>& table, std::string_view key,
              Time now) const;

  Duration half_life_;
  std::map<std::string, DecayedValue, std::less<>> by_user_;
  std::map<std::string, DecayedValue, std::less<>> by_queue_;
};

}  // namespace berth::core
