// The 80% ETA interval (issue 30, item 3): calibrated on the errors of ETAs
// already judged, never before the moment it is given.
#include "core/eta_interval.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace berth::core
