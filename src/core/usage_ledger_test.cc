#include "core/usage_ledger.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace berth::core {
namespace {

constexpr Duration kHalfLife = Duration::Hours(1);

Time T(int64_t seconds) { return Time::FromSeconds(seconds); }

TEST(UsageLedgerTest, ChargesTheDecayedIntegralOfARun) {
  UsageLedger ledger(kHalfLife);
  // One GPU for one half-life: integral of 2^(-(h-x)/h) over [0,h] = h/(2 ln 2).
  ledger.BeginRun("alice", "team-a", WholeGpus(1), T(0));
  ledger.EndRun("alice", "team-a", WholeGpus(1), T(0), T(3600));
  const double expected = 3600.0 / (2 * std::numbers::ln2);
  EXPECT_NEAR(ledger.UserUsage("alice", T(3600)), expected, 1e-6);
  EXPECT_NEAR(ledger.QueueUsage("team-a", T(3600)), expected, 1e-6);
  EXPECT_EQ(ledger.UserUsage("bob", T(3600)), 0);
}

TEST(UsageLedgerTest, AnEndedRunReadBackCountsAsIfItHadRunHere) {
  UsageLedger lived(kHalfLife);
  UsageLedger restored(kHalfLife);
  lived.BeginRun("alice", "q", WholeGpus(2), T(0));
  lived.BeginRun("alice", "q", WholeGpus(1), T(500));
  lived.EndRun("alice", "q", WholeGpus(1), T(500), T(4000));
  lived.EndRun("alice", "q", WholeGpus(2), T(0), T(2000));
  // Read back in another order (by start), and no run ever began here.
  restored.AddEndedRun("alice", "q", WholeGpus(2), T(0), T(2000));
  restored.AddEndedRun("alice", "q", WholeGpus(1), T(500), T(4000));
  for (int64_t now : {4000, 9000, 40000}) {
    EXPECT_NEAR(restored.UserUsage("alice", T(now)), lived.UserUsage("alice", T(now)), 1e-6);
    EXPECT_NEAR(restored.QueueUsage("q", T(now)), lived.QueueUsage("q", T(now)), 1e-6);
  }
  EXPECT_GT(restored.UserUsage("alice", T(4000)), 0);
  // A run that begins after the history counts on top of it.
  restored.BeginRun("alice", "q", WholeGpus(1), T(5000));
  lived.BeginRun("alice", "q", WholeGpus(1), T(5000));
  EXPECT_NEAR(restored.UserUsage("alice", T(9000)), lived.UserUsage("alice", T(9000)), 1e-6);
}

TEST(UsageLedgerTest, RunningJobsCountWhileTheyRun) {
  UsageLedger ledger(kHalfLife);
  ledger.BeginRun("alice", "q", WholeGpus(2), T(100));
  ledger.BeginRun("alice", "q", WholeGpus(1), T(1000));
  for (int64_t now : {1000, 2000, 5000, 20000}) {
    const double expected = ledger.RunningContribution(WholeGpus(2), T(100), T(now)) +
                            ledger.RunningContribution(WholeGpus(1), T(1000), T(now));
    EXPECT_NEAR(ledger.UserUsage("alice", T(now)), expected, 1e-6) << now;
  }
  // Ending a run turns its part into history without a jump.
  const double before = ledger.UserUsage("alice", T(5000));
  ledger.EndRun("alice", "q", WholeGpus(2), T(100), T(5000));
  EXPECT_NEAR(ledger.UserUsage("alice", T(5000)), before, 1e-6);
}

TEST(UsageLedgerTest, HalvesEveryHalfLife) {
  UsageLedger ledger(kHalfLife);
  ledger.BeginRun("alice", "q", WholeGpus(8), T(0));
  ledger.EndRun("alice", "q", WholeGpus(8), T(0), T(60));
  const double at_end = ledger.UserUsage("alice", T(60));
  EXPECT_NEAR(ledger.UserUsage("alice", T(60 + 3600)), at_end / 2, 1e-9);
  EXPECT_NEAR(ledger.UserUsage("alice", T(60 + 7200)), at_end / 4, 1e-9);
}

TEST(UsageLedgerTest, ShortRunsCountAboutTheirGpuSeconds) {
  UsageLedger ledger(Duration::Days(7));
  ledger.BeginRun("u", "q", WholeGpus(2), T(0));
  ledger.EndRun("u", "q", WholeGpus(2), T(0), T(100));
  EXPECT_NEAR(ledger.UserUsage("u", T(100)), 200.0, 0.1);
}

TEST(UsageLedgerTest, EndingRunsInAnyOrderGivesTheSameTotal) {
  UsageLedger forward(kHalfLife);
  UsageLedger backward(kHalfLife);
  for (UsageLedger* ledger : {&forward, &backward}) {
    ledger->BeginRun("u", "q", WholeGpus(1), T(0));
    ledger->BeginRun("u", "q", WholeGpus(1), T(0));
  }
  forward.EndRun("u", "q", WholeGpus(1), T(0), T(100));
  forward.EndRun("u", "q", WholeGpus(1), T(0), T(500));
  backward.EndRun("u", "q", WholeGpus(1), T(0), T(500));
  backward.EndRun("u", "q", WholeGpus(1), T(0), T(100));
  EXPECT_NEAR(forward.UserUsage("u", T(900)), backward.UserUsage("u", T(900)), 1e-9);
}

TEST(UsageLedgerTest, StaysExactAcrossManyHalfLives) {
  // Weights are rebased long before they overflow.
  UsageLedger ledger(Duration::Minutes(1));
  const int64_t far = 400 * 60;  // 400 half-lives
  ledger.BeginRun("u", "q", WholeGpus(1), T(0));
  ledger.EndRun("u", "q", WholeGpus(1), T(0), T(60));
  ledger.BeginRun("u", "q", WholeGpus(4), T(far));
  EXPECT_NEAR(ledger.UserUsage("u", T(far + 60)),
              ledger.RunningContribution(WholeGpus(4), T(far), T(far + 60)), 1e-6);
}

}  // namespace
}  // namespace berth::core
