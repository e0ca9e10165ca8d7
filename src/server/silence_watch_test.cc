#include "server/silence_watch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace berth::server {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

constexpr core::NodeId kA{0};
constexpr core::NodeId kB{1};
constexpr core::NodeId kC{2};

core::Time At(int64_t seconds) { return core::Time::FromSeconds(seconds); }

TEST(SilenceWatchTest, ReportsTheNodesLastHeardBeforeTheCutoffLongestSilentFirst) {
  SilenceWatch watch;
  watch.Heard(kA, At(10));
  watch.Heard(kB, At(11));
  watch.Heard(kC, At(12));
  watch.Heard(kA, At(13));  // moves A behind C
  EXPECT_THAT(watch.SilentBefore(At(11)), IsEmpty());
  EXPECT_THAT(watch.SilentBefore(At(13)), ElementsAre(Pair(kB, At(11)), Pair(kC, At(12))));
  EXPECT_EQ(watch.watched(), 3u);
}

TEST(SilenceWatchTest, AForgottenNodeIsNotReportedAgainUntilHeardAgain) {
  SilenceWatch watch;
  watch.Heard(kA, At(10));
  watch.Heard(kB, At(11));
  EXPECT_THAT(watch.SilentBefore(At(20)), ElementsAre(Pair(kA, At(10)), Pair(kB, At(11))));
  watch.Forget(kA);  // reported down; B's report failed and stays
  EXPECT_THAT(watch.SilentBefore(At(30)), ElementsAre(Pair(kB, At(11))));
  watch.Heard(kA, At(31));
  EXPECT_THAT(watch.SilentBefore(At(40)), ElementsAre(Pair(kB, At(11)), Pair(kA, At(31))));
}

TEST(SilenceWatchTest, ATimeThatGoesBackCountsAsTheLatestHeard) {
  SilenceWatch watch;
  watch.Heard(kA, At(10));
  watch.Heard(kB, At(20));
  watch.Heard(kA, At(5));  // a clock stepped back: A was still heard last
  EXPECT_THAT(watch.SilentBefore(At(20)), IsEmpty());
  EXPECT_THAT(watch.SilentBefore(At(21)), ElementsAre(Pair(kB, At(20)), Pair(kA, At(20))));
}

}  // namespace
}  // namespace berth::server
