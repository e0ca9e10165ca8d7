#include "core/usage_ledger.h"

#include <cmath>
#include <numbers>

#include "common/check.h"

namespace berth::core {

UsageLedger::UsageLedger(Duration half_life) : half_life_(half_life) {
  BERTH_CHECK(half_life > Duration::Zero()) << "half-life must be positive";
}

double UsageLedger::Decay(Duration elapsed) const {
  return std::exp2(-elapsed.seconds() / half_life_.seconds());
}

double UsageLedger::RunningContribution(MilliGpu gpus, Time from, Time now) const {
  if (now <= from) return 0;
  // Integral of g * 2^(-(now - x) / h) dx over [from, now].
  const double h = half_life_.seconds();
  const double g = static_cast<double>(gpus.value()) / 1000.0;
  return g * h / std::numbers::ln2 * (1.0 - Decay(now - from));
}

void UsageLedger::Add(std::map<std::string, DecayedValue, std::less<>>& table, std::string_view key,
                      double amount, Time at) {
  auto it = table.find(key);
  if (it == table.end()) it = table.emplace(std::string(key), DecayedValue{0, at}).first;
  DecayedValue& entry = it->second;
  if (at >= entry.as_of) {
    entry.value = entry.value * Decay(at - entry.as_of) + amount;
    entry.as_of = at;
  } else {
    entry.value += amount * Decay(entry.as_of - at);
  }
}

double UsageLedger::Read(const std::map<std::string, DecayedValue, std::less<>>& table,
                         std::string_view key, Time now) const {
  auto it = table.find(key);
  if (it == table.end()) return 0;
  const DecayedValue& entry = it->second;
  if (now <= entry.as_of) return entry.value;
  return entry.value * Decay(now - entry.as_of);
}

void UsageLedger::Charge(std::string_view user, std::string_view queue, MilliGpu gpus, Time from,
                         Time to) {
  const double amount = RunningContribution(gpus, from, to);
  Add(by_user_, user, amount, to);
  Add(by_queue_, queue, amount, to);
}

double UsageLedger::UserUsage(std::string_view user, Time now) const {
  return Read(by_user_, user, now);
}

double UsageLedger::QueueUsage(std::string_view queue, Time now) const {
  return Read(by_queue_, queue, now);
}

}  // namespace berth::core
