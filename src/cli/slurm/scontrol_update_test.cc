// scontrol update's arguments as Berth's PATCH body (issue 29), and
// refusals in Slurm's words.
#include "cli/slurm/scontrol_update.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace berth::cli::slurm {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ScontrolUpdateTest, ReadsSlurmsKeysInAnyCase) {
  Result<ScontrolUpdate> update =
      ParseScontrolUpdate({"JobId=12", "TimeLimit=1-02:00:00", "partition=vision", "PRIORITY=5"});
  ASSERT_TRUE(update.ok()) << update.status().ToString();
  EXPECT_THAT(update->jobs, ElementsAre(12));
  EXPECT_EQ(update->body, json({{"time_limit_s", 93600}, {"queue", "vision"}, {"priority", 5}}));
  Result<ScontrolUpdate> minutes = ParseScontrolUpdate({"jobid=7,8", "TimeLimit=30"});
  ASSERT_TRUE(minutes.ok());
  EXPECT_THAT(minutes->jobs, ElementsAre(7, 8));
  EXPECT_EQ(minutes->body, json({{"time_limit_s", 1800}}));
}

TEST(ScontrolUpdateTest, RefusesWhatItCannotDoInSlurmsWords) {
  auto message = [](std::vector<std::string> args) {
    Result<ScontrolUpdate> update = ParseScontrolUpdate(args);
    EXPECT_FALSE(update.ok());
    return update.status().message();
  };
  EXPECT_THAT(message({"JobId=1", "NumNodes=2"}),
              HasSubstr("Update of this parameter is not supported: NumNodes=2"));
  EXPECT_THAT(message({"JobId=1", "bogus"}), HasSubstr("not supported: bogus"));
  EXPECT_THAT(message({"JobId=x", "TimeLimit=5"}), HasSubstr("Invalid job id specified"));
  EXPECT_THAT(message({"JobId=0", "TimeLimit=5"}), HasSubstr("Invalid job id specified"));
  EXPECT_THAT(message({"TimeLimit=5"}), HasSubstr("No job identification provided"));
  EXPECT_THAT(message({"JobId=1"}), HasSubstr("Nothing to update"));
  EXPECT_THAT(message({"JobId=1", "TimeLimit=soon"}), HasSubstr("Invalid TimeLimit value"));
  EXPECT_THAT(message({"JobId=1", "TimeLimit=+30"}), HasSubstr("not a change"));
  EXPECT_THAT(message({"JobId=1", "Priority=high"}), HasSubstr("Invalid Priority value"));
  EXPECT_THAT(message({"JobId=1", "Partition=a,b"}), HasSubstr("one partition"));
}

TEST(ScontrolUpdateTest, ServerRefusalsStartWithSlurmsWords) {
  EXPECT_EQ(SlurmRefusal(NotFound("job 9 does not exist")), "Invalid job id specified");
  EXPECT_EQ(SlurmRefusal(Status(StatusCode::kPermissionDenied, "priority: only an admin")),
            "Access/permission denied (priority: only an admin)");
  EXPECT_THAT(SlurmRefusal(FailedPrecondition("queue: job 3 is no longer pending")),
              HasSubstr("Job is no longer pending execution"));
  EXPECT_THAT(SlurmRefusal(FailedPrecondition("job 3 already ended (succeeded)")),
              HasSubstr("Job/step already completing or completed"));
  EXPECT_EQ(SlurmWords(FailedPrecondition("job 3 is no longer pending (state running)")),
            "Job is no longer pending execution");
}

}  // namespace
}  // namespace berth::cli::slurm
