#include "server/run_outcome.h"

#include <gtest/gtest.h>

namespace berth::server {
namespace {

using protocol::TaskOutcome;
using protocol::TaskPhase;
using protocol::TaskReport;

TaskReport Exit(std::optional<int32_t> code, std::optional<int32_t> signal, TaskOutcome outcome,
                std::string message = "") {
  return TaskReport{core::JobId{1}, 0,      1,       TaskPhase::kExited,
                    code,           signal, outcome, std::move(message)};
}

TEST(RunOutcomeTest, LimitsAndStartFailuresFailWhateverTheExitCode) {
  EXPECT_FALSE(TaskFailed(Exit(0, {}, TaskOutcome::kExited)));
  EXPECT_TRUE(TaskFailed(Exit(1, {}, TaskOutcome::kExited)));
  EXPECT_TRUE(TaskFailed(Exit({}, 9, TaskOutcome::kExited)));
  EXPECT_TRUE(TaskFailed(Exit(0, {}, TaskOutcome::kTimeLimit)));
  EXPECT_TRUE(TaskFailed(Exit(0, {}, TaskOutcome::kOutOfMemory)));
  EXPECT_TRUE(TaskFailed(Exit(0, {}, TaskOutcome::kStartFailed)));
  EXPECT_TRUE(TaskFailed(Exit(0, {}, TaskOutcome::kLost)));
  EXPECT_FALSE(TaskFailed(Exit(0, {}, TaskOutcome::kStopped)));
}

TEST(RunOutcomeTest, TheSubStateNamesWhatEndedTheRun) {
  EXPECT_EQ(FailureReason(TaskOutcome::kTimeLimit), core::JobReason::kTimeLimit);
  EXPECT_EQ(FailureReason(TaskOutcome::kOutOfMemory), core::JobReason::kOutOfMemory);
  EXPECT_EQ(FailureReason(TaskOutcome::kStartFailed), core::JobReason::kStartFailed);
  EXPECT_EQ(FailureReason(TaskOutcome::kExited), core::JobReason::kExited);
  EXPECT_EQ(FailureReason(TaskOutcome::kLost), core::JobReason::kExited);
}

TEST(RunOutcomeTest, TheMessageIsTheNodesWordOrTheExitAndNamesTheTaskOfAGang) {
  store::JobRecord single;
  single.request.tasks = 1;
  single.placement = {store::TaskPlacementRecord{"n0", {0}}};
  EXPECT_EQ(FailureMessage(single, 0, Exit({}, 9, TaskOutcome::kOutOfMemory, "out of memory")),
            "out of memory");
  EXPECT_EQ(FailureMessage(single, 0, Exit(3, {}, TaskOutcome::kExited)), "exited with code 3");
  EXPECT_EQ(FailureMessage(single, 0, Exit({}, 15, TaskOutcome::kExited)), "killed by signal 15");
  EXPECT_EQ(FailureMessage(single, 0, Exit(0, {}, TaskOutcome::kTimeLimit)),
            "ran past its time limit");

  store::JobRecord gang;
  gang.request.tasks = 2;
  gang.placement = {store::TaskPlacementRecord{"n0", {0}}, store::TaskPlacementRecord{"n1", {0}}};
  EXPECT_EQ(FailureMessage(gang, 1, Exit({}, 9, TaskOutcome::kExited)),
            "task 1 on n1: killed by signal 9");
}

}  // namespace
}  // namespace berth::server
