#include "core/usage_ledger.h"

#include <cmath>
#include <numbers>

#include "common/check.h"

namespace berth::core {
namespace {

// Weights double every half-life; rebase well before 2^1024 overflows.
constexpr double kMaxWeightExponent = 256;

}  // namespace

UsageLedger::UsageLedger(Duration half_life) : half_life_(half_life) {
  BERTH_CHECK(half_life > Duration::Zero()) << "half-life must be positive";
}

double UsageLedger::Decay(Duration elapsed) const {
  return std::exp2(-elapsed.seconds() / half_life_.seconds());
}

double UsageLedger::Weight(Time start) const {
  return std::exp2((start - epoch_).seconds() / half_life_.seconds());
}

double UsageLedger::RunningContribution(MilliGpu gpus, Time from, Time now) const {
  if (now <= from) return 0;
  // Integral of g * 2^(-(now - x) / h) dx over [from, now].
  const double g = static_cast<double>(gpus.value()) / 1000.0;
  return g * half_life_.seconds() / std::numbers::ln2 * (1.0 - Decay(now - from));
}

void UsageLedger::Rebase(Time epoch) {
  const double factor = Decay(epoch - epoch_);
  for (Table* table : {&by_user_, &by_queue_}) {
    for (auto& [key, account] : *table) account.running_weighted *= factor;
  }
  epoch_ = epoch;
}

void UsageLedger::AddCompleted(UsageAccount& account, double amount, Time at,
                               const UsageLedger& ledger) {
  if (at >= account.as_of) {
    account.completed = account.completed * ledger.Decay(at - account.as_of) + amount;
    account.as_of = at;
  } else {
    account.completed += amount * ledger.Decay(account.as_of - at);
  }
}

void UsageLedger::BeginRun(std::string_view user, std::string_view queue, MilliGpu gpus,
                           Time start) {
  if (!has_epoch_) {
    epoch_ = start;
    has_epoch_ = true;
  } else if ((start - epoch_).seconds() / half_life_.seconds() > kMaxWeightExponent) {
    Rebase(start);
  }
  const double g = static_cast<double>(gpus.value()) / 1000.0;
  const double weighted = g * Weight(start);
  for (auto [table, key] : {std::pair{&by_user_, user}, std::pair{&by_queue_, queue}}) {
    auto it = table->find(key);
    if (it == table->end()) it = table->emplace(std::string(key), UsageAccount{0, start}).first;
    it->second.running_gpus += g;
    it->second.running_weighted += weighted;
  }
}

void UsageLedger::EndRun(std::string_view user, std::string_view queue, MilliGpu gpus, Time start,
                         Time end) {
  BERTH_CHECK(has_epoch_) << "a run ended that never began";
  const double g = static_cast<double>(gpus.value()) / 1000.0;
  const double weighted = g * Weight(start);
  const double amount = RunningContribution(gpus, start, end);
  for (auto [table, key] : {std::pair{&by_user_, user}, std::pair{&by_queue_, queue}}) {
    auto it = table->find(key);
    BERTH_CHECK(it != table->end()) << "a run ended for an unknown account " << key;
    UsageAccount& account = it->second;
    account.running_gpus -= g;
    account.running_weighted -= weighted;
    AddCompleted(account, amount, end, *this);
  }
}

void UsageLedger::AddEndedRun(std::string_view user, std::string_view queue, MilliGpu gpus,
                              Time start, Time end) {
  const double amount = RunningContribution(gpus, start, end);
  for (auto [table, key] : {std::pair{&by_user_, user}, std::pair{&by_queue_, queue}}) {
    auto it = table->find(key);
    if (it == table->end()) it = table->emplace(std::string(key), UsageAccount{0, end}).first;
    AddCompleted(it->second, amount, end, *this);
  }
}

double UsageLedger::Read(const Table& table, std::string_view key, Time now) const {
  auto it = table.find(key);
  if (it == table.end()) return 0;
  const UsageAccount& account = it->second;
  double usage =
      now <= account.as_of ? account.completed : account.completed * Decay(now - account.as_of);
  if (account.running_gpus > 0) {
    const double running = half_life_.seconds() / std::numbers::ln2 *
                           (account.running_gpus - Decay(now - epoch_) * account.running_weighted);
    usage += std::max(0.0, running);
  }
  return usage;
}

double UsageLedger::UserUsage(std::string_view user, Time now) const {
  return Read(by_user_, user, now);
}

double UsageLedger::QueueUsage(std::string_view queue, Time now) const {
  return Read(by_queue_, queue, now);
}

}  // namespace berth::core
