// The 80% ETA interval (issue 30, item 3): calibrated on the errors of ETAs
// already judged, never before the moment it is given.
#include "core/eta_interval.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/test_builders.h"

namespace berth::core {
namespace {

using testing::At;

EtaCalibratorConfig Config(int32_t window, int32_t min_samples) {
  EtaCalibratorConfig config;
  config.window = window;
  config.min_samples = min_samples;
  return config;
}

TEST(EtaIntervalTest, BeforeEnoughHistoryTheIntervalIsThePrior) {
  EtaCalibrator calibrator(Config(100, 3));
  EXPECT_EQ(calibrator.Interval(At(100), At(400)).low, At(100));
  EXPECT_EQ(calibrator.Interval(At(100), At(400)).high, At(700));
  calibrator.Observe(At(0), At(1000), At(1000));
  calibrator.Observe(At(0), At(1000), At(1000));
  EXPECT_EQ(calibrator.Interval(At(100), At(400)).high, At(700)) << "two of three";
  calibrator.Observe(At(0), At(1000), At(1000));
  EXPECT_EQ(calibrator.Interval(At(100), At(400)).low, At(400)) << "every ETA was kept exactly";
  EXPECT_EQ(calibrator.Interval(At(100), At(400)).high, At(400));
}

// Errors of -50%..+49% of the promised wait, one of each percent: the 10th
// and 90th percentiles (nearest rank) are -41% and +39%, applied to the
// new promise's own wait.
TEST(EtaIntervalTest, TheIntervalSpansTheTenthToNinetiethPercentileOfRelativeErrors) {
  EtaCalibrator calibrator(Config(1000, 10));
  for (int i = 0; i < 100; ++i) calibrator.Observe(At(0), At(1000), At(1000 + (i - 50) * 10));
  const EtaInterval interval = calibrator.Interval(At(5000), At(7000));
  EXPECT_EQ(interval.low, At(7000 - 820));
  EXPECT_EQ(interval.high, At(7000 + 780));
  EXPECT_TRUE(interval.Contains(At(7000)));
  EXPECT_FALSE(interval.Contains(At(7781)));
}

TEST(EtaIntervalTest, NeverBeginsBeforeItIsGivenAndScalesShortPromisesByTheFloor) {
  EtaCalibrator calibrator(Config(1000, 1));
  // Started 90% of the promise early, every time.
  for (int i = 0; i < 10; ++i) calibrator.Observe(At(0), At(10000), At(1000));
  EXPECT_EQ(calibrator.Interval(At(0), At(10000)).low, At(1000));
  EXPECT_EQ(calibrator.Interval(At(0), At(100)).low, At(0)) << "-0.9 x 600 s is before now";
  EXPECT_EQ(calibrator.Interval(At(0), At(100)).high, At(0));
}

TEST(EtaIntervalTest, OnlyTheMostRecentWindowCounts) {
  EtaCalibrator calibrator(Config(5, 5));
  for (int i = 0; i < 5; ++i) calibrator.Observe(At(0), At(1000), At(2000));  // +100%
  EXPECT_EQ(calibrator.Interval(At(0), At(1000)).low, At(2000));
  for (int i = 0; i < 5; ++i) calibrator.Observe(At(0), At(1000), At(1000));  // exact
  EXPECT_EQ(calibrator.Interval(At(0), At(1000)).low, At(1000));
  EXPECT_EQ(calibrator.Interval(At(0), At(1000)).high, At(1000));
  EXPECT_EQ(calibrator.observations(), 10);
}

// Issue 30 (live): where every job ahead has a time limit, the start they
// guarantee caps the point and the interval; where they do not, the
// calibrated interval stands.
TEST(EtaIntervalTest, TimeLimitsCapThePointAndTheInterval) {
  const EtaCalibrator prior(Config(100, 3));  // [given, eta + wait]
  EXPECT_EQ(EstimateEta(prior, At(100), At(400), std::nullopt),
            (EtaEstimate{At(400), EtaInterval{At(100), At(700)}}));
  EXPECT_EQ(EstimateEta(prior, At(100), At(400), At(1000)),
            (EtaEstimate{At(400), EtaInterval{At(100), At(700)}}))
      << "a bound later than the interval changes nothing";
  EXPECT_EQ(EstimateEta(prior, At(100), At(400), At(500)),
            (EtaEstimate{At(400), EtaInterval{At(100), At(500)}}));
  EXPECT_EQ(EstimateEta(prior, At(100), At(400), At(300)),
            (EtaEstimate{At(300), EtaInterval{At(100), At(300)}}))
      << "the plan's point is later than the limits allow";

  EtaCalibrator late(Config(100, 1));
  for (int i = 0; i < 10; ++i) late.Observe(At(0), At(1000), At(2000));  // +100%, always
  EXPECT_EQ(EstimateEta(late, At(0), At(1000), std::nullopt).interval,
            (EtaInterval{At(2000), At(2000)}));
  EXPECT_EQ(EstimateEta(late, At(0), At(1000), At(1500)),
            (EtaEstimate{At(1500), EtaInterval{At(1500), At(1500)}}))
      << "the whole interval is past the bound: it collapses onto it, the point too";
}

TEST(EtaIntervalTest, BeforeEnoughHistoryThePointIsThePlans) {
  EtaCalibrator calibrator(Config(100, 3));
  calibrator.Observe(At(0), At(1000), At(2000));
  calibrator.Observe(At(0), At(1000), At(2000));
  EXPECT_EQ(calibrator.Expected(At(100), At(400)), At(400));
  calibrator.Observe(At(0), At(1000), At(2000));
  EXPECT_EQ(calibrator.Expected(At(0), At(1000)), At(2000)) << "late by the whole wait, always";
}

// Starts in three clusters of the planned wait of 10,000 s: 45% at a fifth
// of it (jobs that newcomers' preemptions let in), 20% at half, 35% on
// time. The point is the one most likely to be within a quarter of its
// wait: a fifth of the plan's (the factors 0.14-0.27 keep the 45%). The
// median, half the plan's, would be right for only the 20% in the middle.
TEST(EtaIntervalTest, ThePointIsTheWaitMostLikelyRightWithinAQuarter) {
  EtaCalibrator calibrator(Config(1000, 10));
  for (int i = 0; i < 45; ++i) calibrator.Observe(At(0), At(10000), At(2000));
  for (int i = 0; i < 20; ++i) calibrator.Observe(At(0), At(10000), At(5000));
  for (int i = 0; i < 35; ++i) calibrator.Observe(At(0), At(10000), At(10000));
  EXPECT_EQ(calibrator.Expected(At(10000), At(40000)), At(16000));
  const EtaEstimate estimate = EstimateEta(calibrator, At(10000), At(40000), std::nullopt);
  EXPECT_EQ(estimate.expected, At(16000));
  EXPECT_TRUE(estimate.interval.Contains(estimate.expected));

  for (int i = 0; i < 100; ++i) calibrator.Observe(At(0), At(10000), At(10000));
  EXPECT_EQ(calibrator.Expected(At(10000), At(40000)), At(40000))
      << "once the plan is right again, the window says so";
}

// ITP cluster02's case: the plan promises hours, and half the jobs start
// within minutes (a newcomer's preemption lets them in), at waits spread
// over a factor of 19; the other half spread over 2-12 hours. No window
// of a quarter either side of one factor holds more than a few of the
// short ones, but every one of them is right by the 10 minutes' tolerance
// for a point within 10 minutes of now.
TEST(EtaIntervalTest, ThePointCountsTheTenMinutesToleranceOfShortWaits) {
  EtaCalibrator calibrator(Config(1000, 10));
  for (int i = 0; i < 30; ++i) {
    const double short_wait = 30.0 * std::pow(19.0, i / 29.0);
    calibrator.Observe(At(0), At(14400), At(std::llround(short_wait)));
    calibrator.Observe(At(0), At(14400), At(7200 + 1200 * i));
  }
  const Time expected = calibrator.Expected(At(0), At(14400));
  EXPECT_LE(expected, At(630)) << "a point kept by all 30 short waits";
  EXPECT_GE(expected, At(30));
}

// Short promises and long ones err differently: the hour-long promises
// start at half their wait (newcomers' preemptions let them in), the
// two-day ones at twice it (runs that outlast their prediction). Each gets
// the factor of the promises near it; one factor for all (bandwidth 0)
// tells one of the two kinds wrong every time.
TEST(EtaIntervalTest, ThePointOfAPromiseFollowsThePromisesNearIt) {
  EtaCalibrator calibrator(Config(1000, 10));
  const Duration hour = Duration::Hours(1);
  const Duration two_days = Duration::Hours(48);
  for (int i = 0; i < 40; ++i) {
    calibrator.Observe(At(0), At(0) + hour, At(0) + hour / 2);
    calibrator.Observe(At(0), At(0) + two_days, At(0) + two_days * 2);
  }
  EXPECT_EQ(calibrator.Expected(At(0), At(0) + hour), At(0) + hour / 2);
  EXPECT_EQ(calibrator.Expected(At(0), At(0) + two_days), At(0) + two_days * 2);

  EtaCalibratorConfig one_factor = Config(1000, 10);
  one_factor.point_bandwidth = 0;
  EtaCalibrator pooled(one_factor);
  for (int i = 0; i < 40; ++i) {
    pooled.Observe(At(0), At(0) + hour, At(0) + hour / 2);
    pooled.Observe(At(0), At(0) + two_days, At(0) + two_days * 2);
  }
  EXPECT_EQ(pooled.Expected(At(0), At(0) + hour), At(0) + hour / 2) << "the earliest on ties";
  EXPECT_EQ(pooled.Expected(At(0), At(0) + two_days), At(0) + two_days / 2);
}

// Too few judged ETAs near a promise to tell its own factor (under
// min_samples' worth of weight): the point takes the whole window's. Here
// 40 two-day promises weigh 40 near a new two-day one and the 60 hour-long
// ones 0.14 each: 48.6 < 50, so the window's majority (half the wait)
// answers, not the two-day promises' twice it.
TEST(EtaIntervalTest, APromiseWithTooFewJudgedNearItTakesTheWindowsFactor) {
  EtaCalibrator calibrator(Config(1000, 50));
  const Duration hour = Duration::Hours(1);
  const Duration two_days = Duration::Hours(48);
  for (int i = 0; i < 60; ++i) calibrator.Observe(At(0), At(0) + hour, At(0) + hour / 2);
  for (int i = 0; i < 40; ++i) {
    calibrator.Observe(At(0), At(0) + two_days, At(0) + two_days * 2);
  }
  EXPECT_EQ(calibrator.Expected(At(0), At(0) + hour), At(0) + hour / 2);
  EXPECT_EQ(calibrator.Expected(At(0), At(0) + two_days), At(0) + two_days / 2);
  for (int i = 0; i < 10; ++i) {
    calibrator.Observe(At(0), At(0) + two_days, At(0) + two_days * 2);
  }
  EXPECT_EQ(calibrator.Expected(At(0), At(0) + two_days), At(0) + two_days * 2)
      << "50 two-day promises are enough of their own";
}

// PromisesKeptBy is EtaKept solved for the promise: on a grid of waits and
// promises, a promise lies in the range exactly when it was right.
TEST(EtaIntervalTest, ThePromisesAStartKeepsAreThoseWithinTheirTolerance) {
  for (int64_t waited = 0; waited <= 12000; waited += 37) {
    const PromisedWaits kept = PromisesKeptBy(Duration::Seconds(waited));
    for (int64_t promised = 0; promised <= 20000; promised += 11) {
      const Duration promise = Duration::Seconds(promised);
      EXPECT_EQ(EtaKept(At(0), At(promised), At(waited)),
                kept.low <= promise && promise <= kept.high)
          << "waited " << waited << " s, promised " << promised << " s";
    }
  }
  EXPECT_EQ(EtaTolerance(Duration::Seconds(100)), Duration::Minutes(10));
  EXPECT_EQ(EtaTolerance(Duration::Hours(4)), Duration::Hours(1));
}

// The share of `count` starts that fell inside the intervals given for them,
// each told before its start and judged at it. Errors (start - eta, in
// promised waits of 1000 s) run through -spread..spread in a fixed order.
double Judge(EtaCalibrator& calibrator, int count, double spread) {
  int inside = 0;
  for (int i = 0; i < count; ++i) {
    const double error = spread * static_cast<double>((i * 37) % 201 - 100) / 100.0;
    const EtaInterval given = calibrator.Interval(At(0), At(1000));
    const Time started = At(1000) + Duration::Micros(std::llround(error * 1e9));
    inside += given.Contains(started) ? 1 : 0;
    calibrator.Observe(At(0), At(1000), started, given);
  }
  return static_cast<double>(inside) / count;
}

// Adaptive conformal inference: when the errors widen, the window of past
// errors lags (here it is mostly the narrow ones for the whole second
// phase) and fixed tails hold far fewer than 80% of the starts; moving the
// tails by each judged interval brings the share back near 80%.
TEST(EtaIntervalTest, TheIntervalWidensWhenItsStartsFallOutside) {
  EtaCalibratorConfig fixed = Config(2000, 50);
  fixed.adapt_step = 0;
  EtaCalibratorConfig adaptive = Config(2000, 50);
  ASSERT_GT(adaptive.adapt_step, 0);
  EtaCalibrator still(fixed);
  EtaCalibrator moving(adaptive);
  EXPECT_NEAR(Judge(still, 1000, 0.1), 0.8, 0.05);
  EXPECT_NEAR(Judge(moving, 1000, 0.1), 0.8, 0.05) << "steady errors: both hold 80%";
  const double held_still = Judge(still, 1000, 0.5);
  const double held_moving = Judge(moving, 1000, 0.5);
  EXPECT_LT(held_still, 0.6);
  EXPECT_GT(held_moving, held_still + 0.1);
  EXPECT_NEAR(Judge(moving, 1000, 0.5), 0.8, 0.05) << "then about 80% again";
}

// Issue 30 (live): an ETA that has passed while the job still waits is
// never shown in the past.
TEST(EtaIntervalTest, AnEstimateIsNeverShownInThePast) {
  const EtaEstimate estimate{At(400), EtaInterval{At(300), At(700)}};
  EXPECT_EQ(AsOf(estimate, At(200)), estimate);
  EXPECT_EQ(AsOf(estimate, At(300)), estimate);
  EXPECT_EQ(AsOf(estimate, At(400)), (EtaEstimate{At(400), EtaInterval{At(400), At(700)}}));
  EXPECT_EQ(AsOf(estimate, At(500)), (EtaEstimate{At(500), EtaInterval{At(500), At(700)}}));
  EXPECT_EQ(AsOf(estimate, At(900)), (EtaEstimate{At(900), EtaInterval{At(900), At(900)}}));
}

}  // namespace
}  // namespace berth::core
