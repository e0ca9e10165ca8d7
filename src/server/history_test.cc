#include "server/history.h"

#include <gtest/gtest.h>

#include <thread>

namespace berth::server {
namespace {

using core::Duration;
using core::Time;

HistorySample At(int64_t seconds, int64_t pending = 0) {
  HistorySample sample;
  sample.time = Time::FromSeconds(seconds);
  sample.pending = pending;
  return sample;
}

std::vector<int64_t> Times(const std::vector<HistorySample>& samples) {
  std::vector<int64_t> out;
  for (const HistorySample& sample : samples) out.push_back(sample.time.micros() / 1'000'000);
  return out;
}

TEST(WaitHistogram, BucketsAreInclusiveUpperBoundsWithAnOverflowBucket) {
  WaitHistogram waits;
  waits.Add(Duration::Zero());                            // <= 1 s
  waits.Add(Duration::Seconds(1));                        // <= 1 s (inclusive)
  waits.Add(Duration::Seconds(1) + Duration::Micros(1));  // <= 5 s
  waits.Add(Duration::Minutes(10));                       // <= 900 s
  waits.Add(Duration::Days(2));                           // above 24 h
  waits.Add(Duration::Seconds(-3));                       // a clock step: zero
  EXPECT_EQ(waits.count(), 6);
  EXPECT_EQ(waits.buckets()[0], 3);
  EXPECT_EQ(waits.buckets()[1], 1);
  EXPECT_EQ(waits.buckets()[6], 1);
  EXPECT_EQ(waits.buckets()[WaitHistogram::kBuckets - 1], 1);
  EXPECT_EQ(waits.max(), Duration::Days(2));
  EXPECT_EQ(waits.sum(), Duration::Seconds(1) + Duration::Seconds(1) + Duration::Micros(1) +
                             Duration::Minutes(10) + Duration::Days(2));
}

TEST(WaitHistogram, MergeAddsCountsAndKeepsTheMax) {
  WaitHistogram a;
  a.Add(Duration::Seconds(3));
  WaitHistogram b;
  b.Add(Duration::Seconds(40));
  b.Add(Duration::Seconds(2));
  a.Merge(b);
  EXPECT_EQ(a.count(), 3);
  EXPECT_EQ(a.sum(), Duration::Seconds(45));
  EXPECT_EQ(a.max(), Duration::Seconds(40));
  EXPECT_EQ(a.buckets()[1], 2);
  EXPECT_EQ(a.buckets()[4], 1);
}

TEST(History, KeepsTheNewestCapacitySamplesOldestFirst) {
  History history(3);
  for (int64_t t = 10; t <= 50; t += 10) history.Record(At(t));
  EXPECT_EQ(history.size(), 3u);
  EXPECT_EQ(Times(history.Since(Time::FromSeconds(0))), (std::vector<int64_t>{30, 40, 50}));
}

TEST(History, SinceIsInclusiveAndWorksAcrossTheWrap) {
  History history(4);
  for (int64_t t = 1; t <= 6; ++t) history.Record(At(t * 5));  // keeps 15, 20, 25, 30
  EXPECT_EQ(Times(history.Since(Time::FromSeconds(20))), (std::vector<int64_t>{20, 25, 30}));
  EXPECT_EQ(Times(history.Since(Time::FromSeconds(21))), (std::vector<int64_t>{25, 30}));
  EXPECT_EQ(Times(history.Since(Time::FromSeconds(31))), (std::vector<int64_t>{}));
  EXPECT_EQ(Times(history.Since(Time::FromSeconds(0))), (std::vector<int64_t>{15, 20, 25, 30}));
}

TEST(History, EmptyHistoryAnswersNothing) {
  History history;
  EXPECT_EQ(history.capacity(), History::kDefaultCapacity);
  EXPECT_TRUE(history.Since(Time::FromSeconds(0)).empty());
}

TEST(History, ASampleOlderThanTheNewestIsDropped) {
  History history(8);
  history.Record(At(100, 1));
  history.Record(At(90, 2));  // the clock stepped back
  history.Record(At(100, 3));
  const std::vector<HistorySample> samples = history.Since(Time::FromSeconds(0));
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].pending, 1);
  EXPECT_EQ(samples[1].pending, 3);
}

TEST(History, ReadersSeeWholeSamplesWhileTheLoopRecords) {
  History history(64);
  std::thread writer([&] {
    for (int64_t t = 0; t < 5000; ++t) history.Record(At(t, t));
  });
  for (int i = 0; i < 200; ++i) {
    const std::vector<HistorySample> samples = history.Since(Time::FromSeconds(0));
    ASSERT_LE(samples.size(), 64u);
    for (size_t j = 0; j < samples.size(); ++j) {
      EXPECT_EQ(samples[j].pending, samples[j].time.micros() / 1'000'000);
      if (j > 0) {
        EXPECT_LT(samples[j - 1].time, samples[j].time);
      }
    }
  }
  writer.join();
  EXPECT_EQ(history.Since(Time::FromSeconds(4990)).size(), 10u);
}

}  // namespace
}  // namespace berth::server
