// Team queues (issue 3): validation, ceilings, borrowing and reclaim.
#include "core/quota.h"

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
using ::testing::HasSubstr;
using testing::Id;
using ::testing::IsEmpty;
using testing::N;
using testing::NewJob;
using testing::Secs;
using testing::StartedIds;
using testing::TableEstimator;

QueueSpec Queue(std::string name, int guaranteed, std::optional<int> ceiling = std::nullopt,
                std::string parent = "") {
  QueueSpec spec;
  spec.name = std::move(name);
  spec.parent = std::move(parent);
  spec.guaranteed = WholeGpus(guaranteed);
  if (ceiling) spec.ceiling = WholeGpus(*ceiling);
  return spec;
}

void StartOn(ClusterState& state, const JobSpec& spec, NodeId node, GpuMask gpus, Time at) {
  state.Submit(spec, spec.submit_time);
  Placement placement;
  placement.shape = spec.task;
  placement.tasks.push_back(TaskPlacement{node, gpus});
  state.Start(spec.id, placement, at);
}

TEST(QuotaTreeTest, RejectsBadTreesNamingTheQueue) {
  EXPECT_THAT(QuotaTree::Make({Queue("a", 1), Queue("a", 1)}).status().message(),
              HasSubstr("'a' is listed twice"));
  EXPECT_THAT(QuotaTree::Make({Queue("a", 1, std::nullopt, "nope")}).status().message(),
              HasSubstr("queues.a.parent: no queue named 'nope'"));
  EXPECT_THAT(QuotaTree::Make({Queue("a", 8, 4)}).status().message(),
              HasSubstr("queues.a.ceiling: 4 GPUs is below its guarantee of 8 GPUs"));
  EXPECT_THAT(QuotaTree::Make({Queue("a", 1, std::nullopt, "b"), Queue("b", 1, std::nullopt, "a")})
                  .status()
                  .message(),
              HasSubstr("cycle"));
  EXPECT_THAT(QuotaTree::Make({Queue("team", 8), Queue("x", 6, std::nullopt, "team"),
                               Queue("y", 6, std::nullopt, "team")})
                  .status()
                  .message(),
              HasSubstr("queues.team: children guarantee 12 GPUs, more than its own 8 GPUs"));
  EXPECT_TRUE(QuotaTree::Make({Queue("team", 8), Queue("x", 4, 8, "team")}).ok());
}

TEST(QuotaUsageTest, CountsDescendantsAndChecksEveryCeilingOnThePath) {
  ClusterState state;
  AddNodes(state, 2, 8);
  state.SetQuotas(
      QuotaTree::Make({Queue("vision", 8, 10), Queue("det", 4, std::nullopt, "vision")}).value());
  StartOn(state, NewJob(1).Gpus(6).Queue("det"), N(0), 0x3f, At(0));
  const QuotaUsage usage(*state.quotas(), state);
  EXPECT_EQ(usage.used("vision"), WholeGpus(6));
  EXPECT_TRUE(usage.Borrowing("det")) << "6 > its guarantee of 4";
  EXPECT_FALSE(usage.Borrowing("vision"));
  EXPECT_TRUE(usage.FitsCeilings("det", WholeGpus(4)));
  EXPECT_FALSE(usage.FitsCeilings("det", WholeGpus(5))) << "the parent's ceiling is 10";
  EXPECT_TRUE(usage.FitsCeilings("elsewhere", WholeGpus(16))) << "default queue: no ceiling";
  EXPECT_TRUE(usage.Borrowing("elsewhere"));
}

TEST(QuotaDecideTest, ACeilingHoldsAJobBackWithoutBlockingOthers) {
  ClusterState state;
  AddNodes(state, 2, 8);
  state.SetQuotas(QuotaTree::Make({Queue("a", 4, 4), Queue("b", 4)}).value());
  StartOn(state, NewJob(1).Gpus(4).Queue("a"), N(0), 0x0f, At(0));
  state.Submit(NewJob(2).Gpus(2).Queue("a").Submit(1), At(1));
  state.Submit(NewJob(3).Gpus(2).Queue("b").Submit(2), At(2));
  const Decision decision =
      Decide(state, At(5), testing::NamedPolicy("fifo"), DecideOptions{ExplainLevel::kFull});
  EXPECT_THAT(StartedIds(decision), ElementsAre(Id(3))) << "fifo, yet job 2 does not block";
  ASSERT_NE(FindPending(decision, Id(2)), nullptr);
  EXPECT_EQ(FindPending(decision, Id(2))->reason, ReasonCode::kQuota);
  EXPECT_FALSE(FindPending(decision, Id(2))->eta) << "it waits for its team, not for GPUs";
}

TEST(QuotaDecideTest, BorrowersGiveBackWhatTheOwnerNeeds) {
  ClusterState state;
  AddNodes(state, 2, 8);
  state.SetQuotas(QuotaTree::Make({Queue("owner", 8), Queue("borrower", 8)}).value());
  // The borrower took the whole cluster while the owner was idle.
  StartOn(state, NewJob(1).Gpus(8).Queue("borrower").Preemptible(), N(0), 0xff, At(0));
  StartOn(state, NewJob(2).Gpus(8).Queue("borrower").Preemptible(), N(1), 0xff, At(100));
  // The owner's job is long: by the Berth order alone it would not displace
  // the borrower's shorter jobs, but its guarantee does. (It is drain-long
  // too, 90,000 s against a horizon of about 45,000, and a drain-long job
  // does not preempt by order: reclaim alone makes its room.)
  state.Submit(NewJob(3).Gpus(8).Queue("owner").Submit(5000), At(5000));
  const Policy berth = testing::NamedPolicy(
      "berth", std::make_shared<TableEstimator>(std::map<JobId, Duration>{
                   {Id(1), Secs(6000)}, {Id(2), Secs(6000)}, {Id(3), Secs(90000)}}));
  const Decision decision = Decide(state, At(5000), berth);
  ASSERT_EQ(decision.preemptions.size(), 1u);
  EXPECT_EQ(decision.preemptions[0].job, Id(2)) << "the one that loses least";
  EXPECT_THAT(StartedIds(decision), ElementsAre(Id(3)));

  // Once the owner is at its guarantee, it reclaims no more.
  testing::Apply(state, decision, At(5000));
  state.Submit(NewJob(4).Gpus(8).Queue("owner").Submit(6000), At(6000));
  EXPECT_THAT(Decide(state, At(6000), berth).preemptions, IsEmpty());
}

}  // namespace
}  // namespace berth::core
