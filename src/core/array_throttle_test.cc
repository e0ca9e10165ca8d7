// Slurm's array throttle `%N` (issue 29): every discipline starts at most N
// elements of one array at once, counts the cycle's own starts, frees a
// slot when an element ends or is preempted, and lets the jobs behind pass.
#include "core/array_throttle.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/decide.h"
#include "core/test_builders.h"

namespace berth::core {
namespace {

using testing::AddNodes;
using testing::At;
using ::testing::ElementsAre;
using testing::FindPending;
using testing::Id;
using testing::NewJob;
using testing::StartedIds;

class ArrayThrottleTest : public ::testing::TestWithParam<std::string> {
 protected:
  Decision Run(ClusterState& state, Time now) {
    return Decide(state, now, testing::NamedPolicy(GetParam()), DecideOptions{ExplainLevel::kFull});
  }
};

TEST_P(ArrayThrottleTest, AtMostNElementsStartInOneCycleAndOthersPass) {
  ClusterState state;
  AddNodes(state, 1, 8);
  // Array 1 (elements 1..4) at most 2 at once; job 5 is not in it.
  for (int id = 1; id <= 4; ++id) {
    state.Submit(NewJob(id).Gpus(1).User("alice").InArray(1, 2).Submit(0), At(0));
  }
  state.Submit(NewJob(5).Gpus(1).User("alice").Submit(0), At(0));
  const Decision decision = Run(state, At(0));
  EXPECT_THAT(StartedIds(decision), ElementsAre(Id(1), Id(2), Id(5)))
      << "the throttled elements block nobody";
  for (int id : {3, 4}) {
    const PendingJob* held = FindPending(decision, Id(id));
    ASSERT_NE(held, nullptr);
    EXPECT_EQ(held->reason, ReasonCode::kArrayLimit);
    EXPECT_FALSE(held->eta) << "it waits for its siblings, not for GPUs";
  }
}

TEST_P(ArrayThrottleTest, AnElementThatEndsFreesOneSlot) {
  ClusterState state;
  AddNodes(state, 1, 8);
  for (int id = 1; id <= 4; ++id) {
    state.Submit(NewJob(id).Gpus(1).InArray(1, 2).Submit(0), At(0));
  }
  testing::Apply(state, Run(state, At(0)), At(0));
  ASSERT_EQ(state.running().size(), 2u);
  EXPECT_THAT(StartedIds(Run(state, At(5))), ::testing::IsEmpty()) << "two are running";
  state.Finish(Id(1), At(10));
  EXPECT_THAT(StartedIds(Run(state, At(10))), ElementsAre(Id(3)));
}

TEST_P(ArrayThrottleTest, ArraysAreCountedApart) {
  ClusterState state;
  AddNodes(state, 1, 8);
  state.Submit(NewJob(1).Gpus(1).InArray(1, 1).Submit(0), At(0));
  state.Submit(NewJob(2).Gpus(1).InArray(1, 1).Submit(0), At(0));
  state.Submit(NewJob(3).Gpus(1).InArray(3, 1).Submit(0), At(0));
  state.Submit(NewJob(4).Gpus(1).InArray(3, 1).Submit(0), At(0));
  EXPECT_THAT(StartedIds(Run(state, At(0))), ElementsAre(Id(1), Id(3)));
}

TEST(ArrayThrottleStateTest, TheStateCountsRunningElementsAsTheyStartAndStop) {
  ClusterState state;
  AddNodes(state, 1, 8);
  for (int id = 1; id <= 3; ++id) state.Submit(NewJob(id).Gpus(1).InArray(1, 3).Submit(0), At(0));
  state.Submit(NewJob(4).Gpus(1).Submit(0), At(0));
  testing::Apply(state, Decide(state, At(0), testing::NamedPolicy("fifo")), At(0));
  using Counts = ClusterState::ArrayCounts;
  EXPECT_EQ(state.running_array_elements(), (Counts{{Id(1), 3}})) << "job 4 is in no array";
  state.Finish(Id(1), At(5));
  state.Preempt(Id(2), At(6));
  EXPECT_EQ(state.running_array_elements(), (Counts{{Id(1), 1}}));
  state.Cancel(Id(3), At(7));
  EXPECT_TRUE(state.running_array_elements().empty());
}

INSTANTIATE_TEST_SUITE_P(Disciplines, ArrayThrottleTest,
                         ::testing::Values("fifo", "slurm", "las", "berth"));

TEST(ArrayThrottlePreemptionTest, APreemptedElementNoLongerCounts) {
  // LAS stops element 1 (long-running) for element 2 of the same array,
  // limit 1: the cycle's count takes the victim out, so the start is allowed.
  ClusterState state;
  AddNodes(state, 1, 4);
  const Policy las = testing::NamedPolicy("las");
  state.Submit(NewJob(1).Gpus(4).InArray(1, 1).Preemptible().Submit(0), At(0));
  testing::Apply(state, Decide(state, At(0), las), At(0));
  ArrayThrottle throttle(state);
  const JobSpec sibling = NewJob(2).Gpus(4).InArray(1, 1).Submit(10000);
  EXPECT_FALSE(throttle.Allows(sibling));
  throttle.Remove(state.running().begin()->second->spec);
  EXPECT_TRUE(throttle.Allows(sibling));
  EXPECT_TRUE(throttle.Allows(NewJob(3).Gpus(1).Submit(0))) << "not in an array";
}

}  // namespace
}  // namespace berth::core
