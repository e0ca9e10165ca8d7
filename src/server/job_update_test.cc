// PATCH /api/v1/jobs/{id}'s body (scontrol update): strict, each bad value
// named by its field.
#include "server/job_update.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace berth::server {
namespace {

using ::testing::HasSubstr;

std::string UpdateRejection(std::string_view body) {
  Result<JobUpdate> update = ParseJobUpdate(body);
  EXPECT_FALSE(update.ok()) << body;
  EXPECT_EQ(update.status().code(), StatusCode::kInvalidArgument);
  return update.status().message();
}

TEST(ParseJobUpdate, ReadsTheFieldsItNames) {
  Result<JobUpdate> update =
      ParseJobUpdate(R"({"time_limit_s": 90.5, "queue": "vision", "priority": "high"})");
  ASSERT_TRUE(update.ok()) << update.status().ToString();
  EXPECT_EQ(update->time_limit, core::Duration::Millis(90'500));
  EXPECT_EQ(update->queue, "vision");
  EXPECT_EQ(update->priority, 100);

  Result<JobUpdate> only = ParseJobUpdate(R"({"priority": -5})");
  ASSERT_TRUE(only.ok());
  EXPECT_EQ(only->priority, -5);
  EXPECT_FALSE(only->time_limit);
  EXPECT_FALSE(only->queue);
}

TEST(ParseJobUpdate, NamesTheFieldOfABadValue) {
  EXPECT_THAT(UpdateRejection(R"({"time_limit_s": 0})"), HasSubstr("time_limit_s"));
  EXPECT_THAT(UpdateRejection(R"({"time_limit_s": "1h"})"), HasSubstr("time_limit_s"));
  EXPECT_THAT(UpdateRejection(R"({"time_limit_s": 1e99})"), HasSubstr("time_limit_s"));
  EXPECT_THAT(UpdateRejection(R"({"queue": "a b"})"), HasSubstr("queue"));
  EXPECT_THAT(UpdateRejection(R"({"queue": ""})"), HasSubstr("queue"));
  EXPECT_THAT(UpdateRejection(R"({"priority": 5000})"), HasSubstr("priority"));
  EXPECT_THAT(UpdateRejection(R"({"priority": "urgent"})"), HasSubstr("priority"));
  EXPECT_THAT(UpdateRejection(R"({"gpus": 2})"), HasSubstr("unknown field 'gpus'"));
  EXPECT_THAT(UpdateRejection(R"({})"), HasSubstr("nothing to change"));
  EXPECT_THAT(UpdateRejection(R"([1])"), HasSubstr("body"));
  EXPECT_THAT(UpdateRejection(""), HasSubstr("body"));
  EXPECT_THAT(UpdateRejection(R"({"queue": "a", "queue": "b"})"), HasSubstr("queue"));
}

}  // namespace
}  // namespace berth::server
