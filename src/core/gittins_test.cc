// The Gittins rank on distributions whose answer is known (issue 30, item 1).
#include "core/gittins.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace berth::core {
namespace {

int64_t S(double seconds) { return std::llround(seconds * 1e6); }

// Every size counted once.
std::optional<Duration> Rank(const std::vector<int64_t>& sizes, Duration attained) {
  return GittinsRank(sizes, std::vector<double>(sizes.size(), 1.0), attained);
}

double RankSeconds(const std::vector<int64_t>& sizes, double attained_s) {
  std::optional<Duration> rank = Rank(sizes, Duration::Micros(S(attained_s)));
  EXPECT_TRUE(rank.has_value());
  return rank ? rank->seconds() : -1;
}

// Sizes 1 or 10 s, equally likely. New: a 1 s quantum finishes it half the
// time at cost 1, rank 2 (serving to the end costs 5.5 for certainty: worse).
// Half-way through the short size: rank 1. Past it, the job is a long one:
// its remaining 9 s.
TEST(GittinsTest, TwoPointSizes) {
  const std::vector<int64_t> sizes = {S(1), S(10)};
  EXPECT_DOUBLE_EQ(RankSeconds(sizes, 0), 2.0);
  EXPECT_DOUBLE_EQ(RankSeconds(sizes, 0.5), 1.0);
  EXPECT_DOUBLE_EQ(RankSeconds(sizes, 1), 9.0);
  // Nine in ten short: the first second finishes 90% at cost 1, rank 10/9.
  std::vector<int64_t> mostly_short(9, S(1));
  mostly_short.push_back(S(10));
  EXPECT_NEAR(RankSeconds(mostly_short, 0), 10.0 / 9.0, 1e-6);
}

TEST(GittinsTest, AKnownSizeRanksByRemainingSizeAsSrpt) {
  EXPECT_DOUBLE_EQ(RankSeconds({S(500)}, 0), 500.0);
  EXPECT_DOUBLE_EQ(RankSeconds({S(500)}, 120), 380.0);
  EXPECT_FALSE(Rank({S(500)}, Duration::Seconds(500)).has_value()) << "outlived every sample";
}

// Memoryless sizes (n quantiles of an exponential of mean 1,000 s, at
// i / (n + 1)): the rank is the mean whatever the job attained. Attained
// service is taken at sample points: between two, an empirical
// distribution has an atom just ahead, which a continuous one has not.
TEST(GittinsTest, ExponentialSizesRankAtTheMeanWhateverAttained) {
  const int n = 20000;
  std::vector<int64_t> sizes;
  for (int i = 1; i <= n; ++i) sizes.push_back(S(-1000.0 * std::log(1.0 - i / (n + 1.0))));
  EXPECT_NEAR(RankSeconds(sizes, 0), 1000.0, 30.0);
  for (int k : {n / 4, n / 2, 3 * n / 4}) {
    const double attained = static_cast<double>(sizes[static_cast<size_t>(k - 1)]) / 1e6;
    EXPECT_NEAR(RankSeconds(sizes, attained), 1000.0, 30.0) << attained;
  }
}

// A decreasing hazard (mostly short, a few very long) ranks a job that ran
// past the short ones behind a new one: least attained service. A rising
// hazard (sizes alike) ranks a job that ran most of the way ahead of a new
// one: finish what runs rather than preempt.
TEST(GittinsTest, TheHazardDecidesBetweenLasAndFinishingWhatRuns) {
  std::vector<int64_t> heavy(9, S(60));
  heavy.push_back(S(36000));
  EXPECT_GT(RankSeconds(heavy, 61), RankSeconds(heavy, 0));

  std::vector<int64_t> alike;
  for (int s = 3500; s <= 3700; s += 10) alike.push_back(S(s));
  EXPECT_LT(RankSeconds(alike, 3000), RankSeconds(alike, 0));
  EXPECT_LT(RankSeconds(alike, 3000), 700.0);
}

// A weight counts as that many copies of its size: 1 s at weight 3 and 10 s
// at weight 1 is the sample {1, 1, 1, 10}.
TEST(GittinsTest, AWeightCountsAsCopiesOfItsSize) {
  const std::vector<int64_t> sizes = {S(1), S(10)};
  const std::vector<double> weights = {3.0, 1.0};
  const std::vector<int64_t> copies = {S(1), S(1), S(1), S(10)};
  for (double attained : {0.0, 0.5, 1.0, 4.0}) {
    const Duration a = Duration::Micros(S(attained));
    EXPECT_EQ(GittinsRank(sizes, weights, a), Rank(copies, a)) << attained;
    EXPECT_EQ(MeanRemainingSize(sizes, weights, a),
              MeanRemainingSize(copies, std::vector<double>(4, 1.0), a))
        << attained;
  }
  EXPECT_NEAR(RankSeconds(copies, 0), 4.0 / 3.0, 1e-6);
  EXPECT_EQ(MeanRemainingSize(sizes, weights, Duration::Zero()), Duration::Micros(S(3.25)));
  EXPECT_FALSE(MeanRemainingSize(sizes, weights, Duration::Seconds(10)).has_value());
}

// The remaining size at evenly spread quantiles (the ETA plan's replays
// draw from them): four equally likely sizes give one each; a job that ran
// 150 s is one of the three longer ones, 50 s, 150 s and 250 s from the end;
// one that outlived them all has no distribution left.
TEST(GittinsTest, RemainingSizeQuantilesSpreadOverTheSizesNotOutlived) {
  const std::vector<int64_t> sizes = {S(100), S(200), S(300), S(400)};
  const std::vector<double> alike(sizes.size(), 1.0);
  EXPECT_EQ(RemainingSizeQuantiles(sizes, alike, Duration::Zero(), 4),
            (std::vector<Duration>{Duration::Seconds(100), Duration::Seconds(200),
                                   Duration::Seconds(300), Duration::Seconds(400)}));
  EXPECT_EQ(RemainingSizeQuantiles(sizes, alike, Duration::Seconds(150), 3),
            (std::vector<Duration>{Duration::Seconds(50), Duration::Seconds(150),
                                   Duration::Seconds(250)}));
  EXPECT_EQ(RemainingSizeQuantiles(sizes, alike, Duration::Seconds(200), 1),
            (std::vector<Duration>{Duration::Seconds(100)}))
      << "one quantile is the median of 300 s and 400 s, the lower";
  EXPECT_TRUE(RemainingSizeQuantiles(sizes, alike, Duration::Seconds(400), 4).empty());
}

TEST(GittinsTest, RemainingSizeQuantilesCountAWeightAsCopies) {
  const std::vector<int64_t> sizes = {S(100), S(400)};
  EXPECT_EQ(RemainingSizeQuantiles(sizes, std::vector{1.0, 1.0}, Duration::Zero(), 2),
            (std::vector<Duration>{Duration::Seconds(100), Duration::Seconds(400)}));
  EXPECT_EQ(RemainingSizeQuantiles(sizes, std::vector{3.0, 1.0}, Duration::Zero(), 4),
            (std::vector<Duration>{Duration::Seconds(100), Duration::Seconds(100),
                                   Duration::Seconds(100), Duration::Seconds(400)}));
  EXPECT_TRUE(
      RemainingSizeQuantiles(sizes, std::vector{1.0, 0.0}, Duration::Seconds(100), 2).empty())
      << "only a size too old to weigh anything is left";
}

}  // namespace
}  // namespace berth::core
