#include "core/job_state.h"

#include <gtest/gtest.h>

namespace berth::core {
namespace {

TEST(JobStateTest, NamesRoundTrip) {
  for (JobState state :
       {JobState::kPending, JobState::kHeld, JobState::kStarting, JobState::kRunning,
        JobState::kCompleting, JobState::kPreempted, JobState::kSucceeded, JobState::kFailed,
        JobState::kCancelled, JobState::kLost}) {
    EXPECT_EQ(ParseJobState(JobStateName(state)), state);
  }
  EXPECT_EQ(JobStateName(JobState::kPending), "pending");
  EXPECT_FALSE(ParseJobState("PENDING"));
}

TEST(JobStateTest, FollowsTheLifecycle) {
  EXPECT_TRUE(CanTransition(JobState::kPending, JobState::kStarting));
  EXPECT_TRUE(CanTransition(JobState::kStarting, JobState::kRunning));
  EXPECT_TRUE(CanTransition(JobState::kRunning, JobState::kPreempted));
  EXPECT_TRUE(CanTransition(JobState::kPreempted, JobState::kPending));
  EXPECT_TRUE(CanTransition(JobState::kRunning, JobState::kSucceeded));
  EXPECT_TRUE(CanTransition(JobState::kHeld, JobState::kPending));
  EXPECT_TRUE(CanTransition(JobState::kLost, JobState::kPending));
  EXPECT_FALSE(CanTransition(JobState::kPending, JobState::kRunning)) << "must start first";
  EXPECT_FALSE(CanTransition(JobState::kHeld, JobState::kStarting));
  EXPECT_FALSE(CanTransition(JobState::kPending, JobState::kSucceeded));
}

TEST(JobStateTest, TerminalStatesAreFinal) {
  for (JobState terminal : {JobState::kSucceeded, JobState::kFailed, JobState::kCancelled}) {
    EXPECT_TRUE(IsTerminal(terminal));
    EXPECT_FALSE(CanTransition(terminal, JobState::kPending));
    EXPECT_FALSE(CanTransition(terminal, JobState::kCancelled));
  }
  EXPECT_TRUE(CanTransition(JobState::kRunning, JobState::kCancelled));
  EXPECT_TRUE(CanTransition(JobState::kHeld, JobState::kCancelled));
}

}  // namespace
}  // namespace berth::core
