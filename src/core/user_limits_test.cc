// Per-user running limits of team queues (issue 27, item 4): every
// discipline holds a job back at its user's limit, counts the cycle's own
// starts, and checks the parents' limits too.
#include "core/user_limits.h"

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
using testing::NewJob;
using testing::StartedIds;

QueueSpec Queue(std::string name, std::string parent = "") {
  QueueSpec spec;
  spec.name = std::move(name);
  spec.parent = std::move(parent);
  return spec;
}

QueueSpec GpusPerUser(QueueSpec spec, int gpus) {
  spec.max_gpus_per_user = WholeGpus(gpus);
  return spec;
}

QueueSpec JobsPerUser(QueueSpec spec, int jobs) {
  spec.max_running_jobs_per_user = jobs;
  return spec;
}

void StartNow(ClusterState& state, const Decision& decision, Time now) {
  testing::Apply(state, decision, now);
}

// One policy of each discipline: strict, EASY backfill, preemptive.
class UserLimitTest : public ::testing::TestWithParam<std::string> {
 protected:
  Decision Run(ClusterState& state, Time now) {
    return Decide(state, now, testing::NamedPolicy(GetParam()), DecideOptions{ExplainLevel::kFull});
  }
};

TEST_P(UserLimitTest, AUserAtTheGpuLimitWaitsAndOthersStart) {
  ClusterState state;
  AddNodes(state, 2, 8);
  state.SetQuotas(QuotaTree::Make({GpusPerUser(Queue("vision"), 8)}).value());
  state.Submit(NewJob(1).Gpus(8).User("alice").Queue("vision").Submit(0), At(0));
  StartNow(state, Run(state, At(0)), At(0));
  ASSERT_EQ(state.running().size(), 1u);

  state.Submit(NewJob(2).Gpus(1).User("alice").Queue("vision").Submit(1), At(1));
  state.Submit(NewJob(3).Gpus(2).User("bob").Queue("vision").Submit(2), At(2));
  const Decision decision = Run(state, At(5));
  EXPECT_THAT(StartedIds(decision), ElementsAre(Id(3))) << "alice's job blocks nobody";
  const PendingJob* held = FindPending(decision, Id(2));
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->reason, ReasonCode::kUserLimit);
  ASSERT_TRUE(held->user_limit);
  EXPECT_EQ(held->user_limit->kind, UserLimitKind::kGpus);
  EXPECT_EQ(held->user_limit->queue, 0u);
  EXPECT_EQ(held->user_limit->running, 8000);
  EXPECT_EQ(held->user_limit->allowed, 8000);
  EXPECT_FALSE(held->eta) << "it waits for its user's jobs, not for GPUs";
}

TEST_P(UserLimitTest, TwoStartsInOneCycleCannotTogetherPassTheLimit) {
  ClusterState state;
  AddNodes(state, 2, 8);
  state.SetQuotas(QuotaTree::Make({GpusPerUser(Queue("vision"), 8)}).value());
  state.Submit(NewJob(1).Gpus(6).User("alice").Queue("vision").Submit(0), At(0));
  state.Submit(NewJob(2).Gpus(6).User("alice").Queue("vision").Submit(0), At(0));
  state.Submit(NewJob(3).Gpus(2).User("alice").Queue("vision").Submit(0), At(0));
  const Decision decision = Run(state, At(0));
  // 6 + 2 = 8, never 6 + 6 (the berth policy starts the short job first).
  EXPECT_THAT(StartedIds(decision), ::testing::UnorderedElementsAre(Id(1), Id(3)));
  const PendingJob* held = FindPending(decision, Id(2));
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->reason, ReasonCode::kUserLimit);
  ASSERT_TRUE(held->user_limit);
  EXPECT_GE(held->user_limit->running, 6000) << "job 1's GPUs, started this cycle";
}

TEST_P(UserLimitTest, RunningJobsAreLimitedPerUser) {
  ClusterState state;
  AddNodes(state, 1, 8);
  state.SetQuotas(QuotaTree::Make({JobsPerUser(Queue("vision"), 2)}).value());
  for (int id = 1; id <= 4; ++id) {
    state.Submit(NewJob(id).Gpus(1).User("alice").Queue("vision").Submit(0), At(0));
  }
  state.Submit(NewJob(5).Gpus(1).User("bob").Queue("vision").Submit(0), At(0));
  const Decision decision = Run(state, At(0));
  EXPECT_THAT(StartedIds(decision), ElementsAre(Id(1), Id(2), Id(5)));
  const PendingJob* held = FindPending(decision, Id(3));
  ASSERT_NE(held, nullptr);
  ASSERT_TRUE(held->user_limit);
  EXPECT_EQ(held->user_limit->kind, UserLimitKind::kRunningJobs);
  EXPECT_EQ(held->user_limit->running, 2);
  EXPECT_EQ(held->user_limit->allowed, 2);

  // Once one ends, the next one starts.
  StartNow(state, decision, At(0));
  state.Finish(Id(1), At(10));
  EXPECT_THAT(StartedIds(Run(state, At(10))), ElementsAre(Id(3)));
}

TEST_P(UserLimitTest, AParentsLimitCountsItsChildrensJobs) {
  ClusterState state;
  AddNodes(state, 2, 8);
  state.SetQuotas(QuotaTree::Make({GpusPerUser(Queue("vision"), 4), Queue("det", "vision"),
                                   Queue("seg", "vision")})
                      .value());
  state.Submit(NewJob(1).Gpus(3).User("alice").Queue("det").Submit(0), At(0));
  state.Submit(NewJob(2).Gpus(3).User("alice").Queue("seg").Submit(0), At(0));
  state.Submit(NewJob(3).Gpus(3).User("alice").Queue("elsewhere").Submit(0), At(0));
  const Decision decision = Run(state, At(0));
  EXPECT_THAT(StartedIds(decision), ElementsAre(Id(1), Id(3)))
      << "queues the tree does not name have no limit";
  const PendingJob* held = FindPending(decision, Id(2));
  ASSERT_NE(held, nullptr);
  ASSERT_TRUE(held->user_limit);
  EXPECT_EQ(state.quotas()->queues()[held->user_limit->queue].name, "vision");
}

TEST_P(UserLimitTest, WithoutLimitsNothingIsHeldBack) {
  ClusterState state;
  AddNodes(state, 2, 8);
  state.SetQuotas(QuotaTree::Make({Queue("vision")}).value());
  for (int id = 1; id <= 3; ++id) {
    state.Submit(NewJob(id).Gpus(5).User("alice").Queue("vision").Submit(0), At(0));
  }
  EXPECT_THAT(StartedIds(Run(state, At(0))), ElementsAre(Id(1), Id(2)));
}

INSTANTIATE_TEST_SUITE_P(Disciplines, UserLimitTest,
                         ::testing::Values("fifo", "slurm", "las", "berth"));

TEST(UserLimitPreemptionTest, AStoppedVictimNoLongerCountsForItsUser) {
  // LAS stops alice's long-running job for bob's new one; the cycle's count
  // takes hers out, so her next job waits for GPUs, not for her limit.
  ClusterState state;
  AddNodes(state, 1, 4);
  state.SetQuotas(QuotaTree::Make({GpusPerUser(Queue("vision"), 4)}).value());
  const Policy las = testing::NamedPolicy("las");
  state.Submit(NewJob(1).Gpus(4).User("alice").Queue("vision").Preemptible().Submit(0), At(0));
  StartNow(state, Decide(state, At(0), las), At(0));
  state.Submit(NewJob(2).Gpus(4).User("bob").Queue("vision").Submit(10000), At(10000));
  state.Submit(NewJob(3).Gpus(1).User("alice").Queue("vision").Submit(10000), At(10000));
  const Decision decision = Decide(state, At(10000), las, DecideOptions{ExplainLevel::kReasons});
  ASSERT_EQ(decision.preemptions.size(), 1u);
  EXPECT_EQ(decision.preemptions[0].job, Id(1));
  EXPECT_THAT(StartedIds(decision), ElementsAre(Id(2)));
  const PendingJob* next = FindPending(decision, Id(3));
  ASSERT_NE(next, nullptr);
  EXPECT_NE(next->reason, ReasonCode::kUserLimit);
}

TEST(QueueGovernanceTest, RejectsBadKeysNamingTheQueue) {
  QueueSpec zero_shares = Queue("a");
  zero_shares.shares = 0;
  EXPECT_THAT(QuotaTree::Make({zero_shares}).status().message(),
              HasSubstr("queues.a.shares: must be at least 1, got 0"));
  QueueSpec no_jobs = JobsPerUser(Queue("a"), 0);
  EXPECT_THAT(QuotaTree::Make({no_jobs}).status().message(),
              HasSubstr("queues.a.max_running_jobs_per_user: must be at least 1"));
  QueueSpec time = Queue("a");
  time.max_time = Duration::Zero();
  EXPECT_THAT(QuotaTree::Make({time}).status().message(), HasSubstr("queues.a.max_time_s"));
  QueueSpec one = Queue("a");
  one.is_default = true;
  QueueSpec two = Queue("b");
  two.is_default = true;
  EXPECT_THAT(QuotaTree::Make({one, two}).status().message(),
              HasSubstr("queues.b.default: queue 'a' is the default already"));
  QueueSpec empty_user = Queue("a");
  empty_user.allow_users = {""};
  EXPECT_THAT(QuotaTree::Make({empty_user}).status().message(), HasSubstr("queues.a.allow_users"));
  Result<QuotaTree> tree = QuotaTree::Make({Queue("x"), one});
  ASSERT_TRUE(tree.ok());
  ASSERT_NE(tree->default_queue(), nullptr);
  EXPECT_EQ(tree->default_queue()->name, "a");
  EXPECT_FALSE(tree->limits_users());
  EXPECT_TRUE(QuotaTree::Make({GpusPerUser(Queue("a"), 1)})->limits_users());
}

}  // namespace
}  // namespace berth::core
