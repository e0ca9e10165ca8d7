#include "cli/slurm/sbatch_wait.h"

#include <gtest/gtest.h>

#include "cli/slurm/sbatch_args.h"

namespace berth::cli::slurm {
namespace {

using nlohmann::json;

TEST(SbatchWaitTest, WaitIsSbatchsOwnOptionLongAndShort) {
  Result<SbatchRequest> request = ParseSbatchArgs({"-W", "job.sh"});
  ASSERT_TRUE(request.ok()) << request.status().message();
  EXPECT_TRUE(request->wait);
  EXPECT_TRUE(request->warnings.empty());
  request = ParseSbatchArgs({"--wait", "--wrap", "true"});
  ASSERT_TRUE(request.ok()) << request.status().message();
  EXPECT_TRUE(request->wait);
  EXPECT_FALSE(ParseSbatchArgs({"job.sh"})->wait);
}

TEST(SbatchWaitTest, NoCodeUntilEveryJobHasEnded) {
  EXPECT_EQ(WaitedExitCode({json{{"state", "pending"}}}), std::nullopt);
  EXPECT_EQ(
      WaitedExitCode({json{{"state", "failed"}, {"exit_code", 3}}, json{{"state", "running"}}}),
      std::nullopt);
}

TEST(SbatchWaitTest, TheJobsOwnExitCode) {
  EXPECT_EQ(WaitedExitCode({json{{"state", "succeeded"}, {"exit_code", 0}}}), 0);
  EXPECT_EQ(WaitedExitCode({json{{"state", "failed"}, {"reason", "exited"}, {"exit_code", 3}}}), 3);
}

TEST(SbatchWaitTest, ASignalIsOneAsInSlurm) {
  // Slurm: WEXITSTATUS for a job that exited, else 1 (a time limit's
  // SIGTERM, a cancel, a kill).
  EXPECT_EQ(WaitedExitCode({json{{"state", "timeout"}, {"signal", 15}}}), 1);
  EXPECT_EQ(WaitedExitCode({json{{"state", "cancelled"}, {"signal", 9}}}), 1);
}

TEST(SbatchWaitTest, EndedWithoutACode) {
  // Cancelled while pending: Slurm's 0:0.
  EXPECT_EQ(WaitedExitCode({json{{"state", "cancelled"}}}), 0);
  // Failed without running to an exit (its node lost): not a success.
  EXPECT_EQ(WaitedExitCode({json{{"state", "failed"}, {"reason", "node_lost"}}}), 1);
}

TEST(SbatchWaitTest, AnArraysHighest) {
  EXPECT_EQ(WaitedExitCode({json{{"state", "failed"}, {"exit_code", 2}},
                            json{{"state", "succeeded"}, {"exit_code", 0}},
                            json{{"state", "failed"}, {"exit_code", 5}}}),
            5);
}

}  // namespace
}  // namespace berth::cli::slurm
