#include "core/job_state.h"

#include <gtest/gtest.h>

#include <iterator>
#include <string_view>
#include <utility>

namespace berth::core {
namespace {

TEST(JobStateTest, NamesRoundTrip) {
  for (JobState state :
       {JobState::kPending, JobState::kHeld, JobState::kStarting, JobState::kRunning,
        JobState::kCompleting, JobState::kPreempted, JobState::kSucceeded, JobState::kFailed,
        JobState::kCancelled, JobState::kLost, JobState::kTimeout}) {
    EXPECT_EQ(ParseJobState(JobStateName(state)), state);
  }
  EXPECT_EQ(JobStateName(JobState::kPending), "pending");
  EXPECT_EQ(JobStateName(JobState::kTimeout), "timeout");
  EXPECT_TRUE(IsTerminal(JobState::kTimeout));
  EXPECT_TRUE(CanTransition(JobState::kRunning, JobState::kTimeout));
  EXPECT_FALSE(ParseJobState("PENDING"));
}

// The words are stored and shown by the API: pinned here, each one, so a
// rename fails a test.
TEST(JobStateTest, ReasonNamesAreStableAndRoundTrip) {
  const std::pair<JobReason, std::string_view> kWords[] = {
      {JobReason::kNone, ""},
      {JobReason::kHeld, "held"},
      {JobReason::kDependency, "dependency"},
      {JobReason::kDependencyNeverSatisfied, "dependency_never_satisfied"},
      {JobReason::kPreempted, "preempted"},
      {JobReason::kCancelled, "cancelled"},
      {JobReason::kRetrying, "retrying"},
      {JobReason::kExited, "exited"},
      {JobReason::kTaskFailed, "task_failed"},
      {JobReason::kNodeLost, "node_lost"},
      {JobReason::kTimeLimit, "time_limit"},
      {JobReason::kOutOfMemory, "out_of_memory"},
      {JobReason::kStartFailed, "start_failed"},
  };
  for (const auto& [reason, word] : kWords) {
    EXPECT_EQ(JobReasonName(reason), word);
    EXPECT_EQ(ParseJobReason(word), reason) << word;
  }
  // Every value up to the last has a word of its own.
  const auto last = static_cast<int>(JobReason::kStartFailed);
  EXPECT_EQ(std::size(kWords), static_cast<size_t>(last + 1));
  for (int value = 0; value <= last; ++value) {
    EXPECT_NE(JobReasonName(static_cast<JobReason>(value)), "unknown") << value;
  }
  EXPECT_FALSE(ParseJobReason("PREEMPTED"));
  EXPECT_FALSE(ParseJobReason("resources")) << "a scheduler reason code, not a sub-state";
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
