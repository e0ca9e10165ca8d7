#include "core/bursts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/test_builders.h"

namespace berth::core {
namespace {

using testing::At;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::NewJob;
using testing::Secs;

JobSpec Unnamed(int64_t id, int64_t submit_s, int gpus = 1, const std::string& user = "u") {
  return NewJob(id).User(user).Queue("q").Gpus(gpus).Submit(submit_s);
}

TEST(BurstsTest, SubmissionsWithinTheGapOfTheLastShareABurst) {
  Bursts bursts(BurstConfig{Secs(300)});
  for (const JobSpec& spec : {Unnamed(1, 0), Unnamed(2, 200), Unnamed(3, 450), Unnamed(4, 800),
                              Unnamed(5, 810, 2), Unnamed(6, 820, 1, "v")}) {
    bursts.Submitted(spec);
  }
  ASSERT_TRUE(bursts.Of(JobId{1}).has_value());
  EXPECT_EQ(bursts.Of(JobId{2}), bursts.Of(JobId{1}));
  EXPECT_EQ(bursts.Of(JobId{3}), bursts.Of(JobId{1})) << "250 s after the burst's last";
  EXPECT_NE(bursts.Of(JobId{4}), bursts.Of(JobId{1})) << "350 s after: a new burst";
  EXPECT_NE(bursts.Of(JobId{5}), bursts.Of(JobId{4})) << "another GPU count";
  EXPECT_NE(bursts.Of(JobId{6}), bursts.Of(JobId{4})) << "another user";
  const std::optional<BurstId> before = bursts.Of(JobId{1});
  bursts.Submitted(Unnamed(1, 900));
  EXPECT_EQ(bursts.Of(JobId{1}), before) << "requeued: it stays in the burst it arrived in";
  bursts.Submitted(Unnamed(7, 400));
  EXPECT_FALSE(bursts.Of(JobId{7}).has_value())
      << "submitted 400 s before the latest burst's last (an ended job requeued): in none";
}

TEST(BurstsTest, NamedJobsAndAZeroGapMakeNoBursts) {
  Bursts bursts(BurstConfig{Secs(300)});
  bursts.Submitted(NewJob(1).User("u").Name("sweep").Gpus(1));
  EXPECT_FALSE(bursts.Of(JobId{1}).has_value()) << "its name already is its class";
  Bursts off(BurstConfig{Duration::Zero()});
  off.Submitted(Unnamed(2, 0));
  EXPECT_FALSE(off.Of(JobId{2}).has_value());
}

TEST(BurstsTest, AMembersFirstStartProbesItsBurst) {
  Bursts bursts(BurstConfig{Secs(300)});
  bursts.Submitted(Unnamed(1, 0));
  bursts.Submitted(Unnamed(2, 10));
  const BurstId burst = *bursts.Of(JobId{1});
  EXPECT_FALSE(bursts.Probed(burst));
  EXPECT_EQ(bursts.LongestRunning(burst, At(100)), Duration::Zero());
  bursts.Started(JobId{2}, At(100));
  EXPECT_TRUE(bursts.Probed(burst));
  bursts.Started(JobId{1}, At(400));
  EXPECT_EQ(bursts.LongestRunning(burst, At(1000)), Secs(900)) << "the earliest live start";
  bursts.Ended(JobId{2});
  EXPECT_EQ(bursts.LongestRunning(burst, At(1000)), Secs(600));
  EXPECT_TRUE(bursts.Probed(burst)) << "what was learned stays";
}

// Memory stays bounded: a burst goes once it is closed and empty, whichever
// comes last.
TEST(BurstsTest, AClosedBurstIsForgottenWithItsLastMember) {
  Bursts bursts(BurstConfig{Secs(300)});
  bursts.Submitted(Unnamed(1, 0));
  bursts.Submitted(Unnamed(2, 10));
  const BurstId first = *bursts.Of(JobId{1});
  EXPECT_THAT(bursts.Ended(JobId{1}), IsEmpty());
  EXPECT_THAT(bursts.Ended(JobId{2}), IsEmpty()) << "still open: a member may yet arrive";
  EXPECT_THAT(bursts.Submitted(Unnamed(3, 1000)), ElementsAre(first)) << "closed and empty";
  EXPECT_EQ(bursts.size(), 1u);

  bursts.Submitted(Unnamed(4, 1010));
  const BurstId second = *bursts.Of(JobId{3});
  EXPECT_THAT(bursts.Submitted(Unnamed(5, 5000)), IsEmpty()) << "closed, members left";
  EXPECT_THAT(bursts.Ended(JobId{3}), IsEmpty());
  EXPECT_THAT(bursts.Ended(JobId{4}), ElementsAre(second));
  EXPECT_FALSE(bursts.Of(JobId{4}).has_value());
  EXPECT_EQ(bursts.size(), 1u);
  for (int64_t id = 6; id < 1006; ++id) {
    bursts.Submitted(Unnamed(id, 10000 + id * 1000));
    bursts.Ended(JobId{id});
  }
  EXPECT_EQ(bursts.size(), 2u) << "job 5's, and the open one";
}

}  // namespace
}  // namespace berth::core
