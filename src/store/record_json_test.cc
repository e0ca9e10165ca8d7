#include "store/record_json.h"

#include <gtest/gtest.h>

#include <limits>

#include "store/store_test_records.h"

namespace berth::store {
namespace {

using nlohmann::json;

TEST(RecordJsonTest, FullJobRecordRoundTrips) {
  const JobRecord job = testing_records::FullJob();
  Result<JobRecord> back = JobRecordFromJson(JobRecordToJson(job));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, job);
}

TEST(RecordJsonTest, DefaultJobRecordRoundTrips) {
  const JobRecord job;
  Result<JobRecord> back = JobRecordFromJson(JobRecordToJson(job));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, job);
}

TEST(RecordJsonTest, RoundTripSurvivesTextForm) {
  // The stores keep the dumped text; extreme values must survive it.
  JobRecord job = testing_records::FullJob();
  job.submit_time = core::Time::Infinite();
  job.version = std::numeric_limits<int64_t>::max();
  job.exit_code = std::numeric_limits<int32_t>::min();
  job.request.env["unicode"] = "gpu \xc3\xa9t\xc3\xa9 \xe2\x9c\x93";
  Result<JobRecord> back = JobRecordFromJson(json::parse(JobRecordToJson(job).dump()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, job);
}

TEST(RecordJsonTest, JobRequestRoundTrips) {
  const JobRequest request = testing_records::FullJob().request;
  Result<JobRequest> back = JobRequestFromJson(JobRequestToJson(request));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, request);
}

TEST(RecordJsonTest, AbsentOptionalsAreLeftOut) {
  const json out = JobRecordToJson(JobRecord{});
  EXPECT_FALSE(out.contains("start_time"));
  EXPECT_FALSE(out.contains("exit_code"));
  EXPECT_FALSE(out.contains("array_parent"));
  EXPECT_FALSE(out["request"].contains("time_limit_us"));
  EXPECT_EQ(out["state"], "pending");
}

TEST(RecordJsonTest, MissingFieldsTakeDefaults) {
  // A row written before a field existed still reads.
  Result<JobRecord> job = JobRecordFromJson(json{{"id", 7}, {"request", json::object()}});
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->id, core::JobId(7));
  EXPECT_EQ(job->request, JobRequest{});
  EXPECT_EQ(job->state, core::JobState::kPending);
}

TEST(RecordJsonTest, UnknownFieldsAreIgnored) {
  json in = JobRecordToJson(testing_records::FullJob());
  in["added_later"] = 1;
  in["request"]["also_new"] = "x";
  EXPECT_TRUE(JobRecordFromJson(in).ok());
}

TEST(RecordJsonTest, ReasonsAreStoredAsTheirApiWords) {
  JobRecord job = testing_records::FullJob();
  job.reason = core::JobReason::kDependencyNeverSatisfied;
  json out = JobRecordToJson(job);
  EXPECT_EQ(out["reason"], "dependency_never_satisfied");
  Result<JobRecord> back = JobRecordFromJson(out);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->reason, core::JobReason::kDependencyNeverSatisfied);
  EXPECT_EQ(JobRecordToJson(JobRecord{})["reason"], "");
}

// A reason word this version does not know (a later version wrote it) must
// not make the record unreadable: Recover loads every live job.
TEST(RecordJsonTest, AnUnknownReasonWordReadsAsNone) {
  json in = JobRecordToJson(testing_records::FullJob());
  in["reason"] = "from_a_later_version";
  Result<JobRecord> job = JobRecordFromJson(in);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->reason, core::JobReason::kNone);
  EXPECT_EQ(job->state, core::JobState::kRunning) << "the rest of the record reads as written";
}

struct BadField {
  std::string name;
  json patch;  // merged into a valid record
  std::string message;
};

class RecordJsonBadFieldTest : public ::testing::TestWithParam<BadField> {};

TEST_P(RecordJsonBadFieldTest, ErrorNamesTheField) {
  json in = JobRecordToJson(testing_records::FullJob());
  in.merge_patch(GetParam().patch);
  Result<JobRecord> job = JobRecordFromJson(in);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(job.status().message(), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Fields, RecordJsonBadFieldTest,
    ::testing::Values(
        BadField{"TasksNotANumber",
                 {{"request", {{"tasks", "two"}}}},
                 "request.tasks: expected an int32, got \"two\""},
        BadField{"TasksOutOfInt32",
                 {{"request", {{"tasks", 1LL << 40}}}},
                 "request.tasks: expected an int32, got 1099511627776"},
        BadField{"UnknownState",
                 {{"state", "sleeping"}},
                 "state: expected a job state, got \"sleeping\""},
        BadField{"ReasonNotAString", {{"reason", 3}}, "reason: expected a string, got 3"},
        BadField{"CommandNotStrings",
                 {{"request", {{"command", {"sleep", 1}}}}},
                 "request.command[1]: expected a string, got 1"},
        BadField{"EnvValueNotString",
                 {{"request", {{"env", {{"A", true}}}}}},
                 "request.env.A: expected a string, got true"},
        BadField{"DependencyKind",
                 {{"request", {{"depends_on", {{{"kind", "after"}, {"job", 1}}}}}}},
                 "request.depends_on[0].kind: expected afterok|afterany|afternotok, got \"after\""},
        BadField{"PlacementGpu",
                 {{"placement", {{{"node", "n1"}, {"gpus", {0, -1}}}}}},
                 "placement[0].gpus[1]: expected a device index, got -1"},
        BadField{"RequestNotObject", {{"request", 3}}, "request: expected an object, got 3"},
        BadField{"Fractional", {{"submit_time", 1.5}}, "submit_time: expected an int64, got 1.5"},
        BadField{"HugeUnsigned",
                 {{"version", 18446744073709551615ULL}},
                 "version: expected an int64, got 18446744073709551615"}),
    [](const ::testing::TestParamInfo<BadField>& param_info) { return param_info.param.name; });

TEST(RecordJsonTest, NotAnObject) {
  Result<JobRecord> job = JobRecordFromJson(json::array());
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().message(), "(record): expected an object, got []");
}

TEST(RecordJsonTest, NodeRecordRoundTrips) {
  const NodeRecord node = testing_records::Node("gpu-07", core::NodeState::kDraining);
  Result<NodeRecord> back = NodeRecordFromJson(NodeRecordToJson(node));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  // NodeRecord has no operator== (core::NodeSpec has none): compare the form.
  EXPECT_EQ(NodeRecordToJson(*back), NodeRecordToJson(node));
  EXPECT_EQ(back->spec.gpus.at(1).health, core::GpuHealth::kUnhealthy);
  EXPECT_EQ(back->spec.gpus.at(3).interconnect_group, 1);
  EXPECT_EQ(back->state, core::NodeState::kDraining);
  EXPECT_TRUE(back->drained);
}

TEST(RecordJsonTest, NodeStateMustBeAWord) {
  json in = NodeRecordToJson(testing_records::Node("n", core::NodeState::kUp));
  in["state"] = "gone";
  Result<NodeRecord> node = NodeRecordFromJson(in);
  ASSERT_FALSE(node.ok());
  EXPECT_EQ(node.status().message(), "state: expected up|draining|down, got \"gone\"");
}

TEST(RecordJsonTest, WordsRoundTrip) {
  for (DependencyKind kind :
       {DependencyKind::kAfterOk, DependencyKind::kAfterAny, DependencyKind::kAfterNotOk}) {
    EXPECT_EQ(ParseDependencyKindWord(DependencyKindWord(kind)), kind);
  }
  for (Role role : {Role::kAdmin, Role::kUser, Role::kAgent}) {
    EXPECT_EQ(ParseRoleWord(RoleWord(role)), role);
  }
  EXPECT_EQ(DependencyKindWord(DependencyKind::kAfterNotOk), "afternotok");
  EXPECT_EQ(RoleWord(Role::kAgent), "agent");
  EXPECT_FALSE(ParseRoleWord("root"));
  EXPECT_EQ(ParseNodeStateWord("draining"), core::NodeState::kDraining);
}

}  // namespace
}  // namespace berth::store
