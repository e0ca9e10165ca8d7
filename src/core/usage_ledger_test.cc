#include "core/usage_ledger.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace berth::core {
namespace {

constexpr Duration kHalfLife = Duration::Hours(1);

TEST(UsageLedgerTest, ChargesTheDecayedIntegralOfARun) {
  UsageLedger ledger(kHalfLife);
  // One GPU for one half-life: integral of 2^(-(h-x)/h) over [0,h] = h/(2 ln 2).
  ledger.Charge("alice", "team-a", WholeGpus(1), Time::FromSeconds(0), Time::FromSeconds(3600));
  const double expected = 3600.0 / (2 * std::numbers::ln2);
  EXPECT_NEAR(ledger.UserUsage("alice", Time::FromSeconds(3600)), expected, 1e-6);
  EXPECT_NEAR(ledger.QueueUsage("team-a", Time::FromSeconds(3600)), expected, 1e-6);
  EXPECT_EQ(ledger.UserUsage("bob", Time::FromSeconds(3600)), 0);
}

TEST(UsageLedgerTest, HalvesEveryHalfLife) {
  UsageLedger ledger(kHalfLife);
  ledger.Charge("alice", "q", WholeGpus(8), Time::FromSeconds(0), Time::FromSeconds(60));
  const double at_end = ledger.UserUsage("alice", Time::FromSeconds(60));
  EXPECT_NEAR(ledger.UserUsage("alice", Time::FromSeconds(60 + 3600)), at_end / 2, 1e-9);
  EXPECT_NEAR(ledger.UserUsage("alice", Time::FromSeconds(60 + 7200)), at_end / 4, 1e-9);
}

TEST(UsageLedgerTest, ShortRunsCountAboutTheirGpuSeconds) {
  UsageLedger ledger(Duration::Days(7));
  ledger.Charge("u", "q", WholeGpus(2), Time::FromSeconds(0), Time::FromSeconds(100));
  EXPECT_NEAR(ledger.UserUsage("u", Time::FromSeconds(100)), 200.0, 0.1);
}

TEST(UsageLedgerTest, OutOfOrderChargesGiveTheSameTotal) {
  UsageLedger forward(kHalfLife);
  forward.Charge("u", "q", WholeGpus(1), Time::FromSeconds(0), Time::FromSeconds(100));
  forward.Charge("u", "q", WholeGpus(1), Time::FromSeconds(0), Time::FromSeconds(500));
  UsageLedger backward(kHalfLife);
  backward.Charge("u", "q", WholeGpus(1), Time::FromSeconds(0), Time::FromSeconds(500));
  backward.Charge("u", "q", WholeGpus(1), Time::FromSeconds(0), Time::FromSeconds(100));
  EXPECT_NEAR(forward.UserUsage("u", Time::FromSeconds(900)),
              backward.UserUsage("u", Time::FromSeconds(900)), 1e-9);
}

}  // namespace
}  // namespace berth::core
