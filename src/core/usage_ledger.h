// Decayed usage for fair share, as Slurm's PriorityDecayHalfLife: every
// GPU-second used counts half as much one half-life later.
//
// The ledger follows runs as they begin and end, so a user's or queue's
// usage at any instant, running jobs included, is O(1) to read: the decayed
// integral of a run started at s is g*h/ln2*(1 - 2^(-(t-s)/h)), and summed
// over an account's running jobs that is h/ln2*(G - 2^(-t/h) * sum g*2^(s/h)),
// two numbers kept per account. Values are doubles: this is a score, not
// resource accounting.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/resources.h"
#include "core/time.h"

namespace berth::core {

struct UsageAccount {
  double completed = 0;  // decayed GPU-seconds of ended runs, as of `as_of`
  Time as_of;
  double running_gpus = 0;      // G: GPUs of the account's running jobs
  double running_weighted = 0;  // sum of g * 2^((start - epoch) / h)
};

class UsageLedger {
 public:
  explicit UsageLedger(Duration half_life);

  Duration half_life() const { return half_life_; }

  // A run of `gpus` for the user and queue begins at `start`.
  void BeginRun(std::string_view user, std::string_view queue, MilliGpu gpus, Time start);
  // The run that began at `start` ends at `end`: its usage becomes history.
  void EndRun(std::string_view user, std::string_view queue, MilliGpu gpus, Time start, Time end);
  // A run from `start` to `end` that this ledger never saw begin: the
  // history a restarted server reads back from its store. Counts as if
  // BeginRun and EndRun had been called then.
  void AddEndedRun(std::string_view user, std::string_view queue, MilliGpu gpus, Time start,
                   Time end);

  // Decayed GPU-seconds at `now`, running jobs included.
  double UserUsage(std::string_view user, Time now) const;
  double QueueUsage(std::string_view queue, Time now) const;
  // Decayed GPU-seconds of a run from `from` until `now`.
  double RunningContribution(MilliGpu gpus, Time from, Time now) const;

  // Queues and users ever seen, in name order.
  const std::map<std::string, UsageAccount, std::less<>>& queues() const { return by_queue_; }
  const std::map<std::string, UsageAccount, std::less<>>& users() const { return by_user_; }

 private:
  using Table = std::map<std::string, UsageAccount, std::less<>>;
  double Decay(Duration elapsed) const;
  double Weight(Time start) const;  // 2^((start - epoch) / h)
  void Rebase(Time epoch);
  double Read(const Table& table, std::string_view key, Time now) const;
  static void AddCompleted(UsageAccount& account, double amount, Time at,
                           const UsageLedger& ledger);

  Duration half_life_;
  // Reference time of the running weights; moved forward before they grow
  // large enough to lose precision.
  Time epoch_;
  bool has_epoch_ = false;
  Table by_user_;
  Table by_queue_;
};

}  // namespace berth::core
