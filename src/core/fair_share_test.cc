// Fair share with configured shares (issue 27, item 4): shares per user and
// per queue (hierarchical) weigh the decayed usage and change the order.
#include "core/fair_share.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/decide.h"
#include "core/test_builders.h"

namespace berth::core {
namespace {

using testing::AddNodes;
using testing::At;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using testing::Id;
using testing::NewJob;
using testing::StartedIds;

QueueSpec Queue(std::string name, int64_t shares, std::string parent = "") {
  QueueSpec spec;
  spec.name = std::move(name);
  spec.parent = std::move(parent);
  spec.shares = shares;
  return spec;
}

ClusterState::UserShares NoShares() { return {}; }

TEST(FairShareTest, UserSharesNormalizeUsage) {
  ClusterState state;
  state.AddEndedRun("alice", "q", WholeGpus(1), At(0), At(1000));
  state.AddEndedRun("bob", "q", WholeGpus(1), At(0), At(1000));
  {
    const FairShare equal(state, At(1000));
    EXPECT_DOUBLE_EQ(equal.UserExponent("alice"), 1.0);
    EXPECT_DOUBLE_EQ(equal.UserExponent("bob"), 1.0);
  }
  state.SetUserShares({{"alice", 3}});
  const FairShare weighted(state, At(1000));
  EXPECT_THAT(weighted.UserExponent("alice"), DoubleNear(0.5 / 0.75, 1e-12));
  EXPECT_THAT(weighted.UserExponent("bob"), DoubleNear(0.5 / 0.25, 1e-12)) << "unnamed: 1 share";
}

TEST(FairShareTest, QueueSharesAreSplitDownTheTree) {
  // vision (3 shares) holds det and seg (1 each); nlp has 1 share. Each
  // used a quarter of all usage but det and seg together half.
  ClusterState state;
  state.SetQuotas(QuotaTree::Make({Queue("vision", 3), Queue("det", 1, "vision"),
                                   Queue("seg", 1, "vision"), Queue("nlp", 1)})
                      .value());
  state.AddEndedRun("u", "det", WholeGpus(1), At(0), At(1000));
  state.AddEndedRun("u", "seg", WholeGpus(1), At(0), At(1000));
  state.AddEndedRun("u", "nlp", WholeGpus(2), At(0), At(1000));
  const FairShare share(state, At(1000));
  // det: a quarter of the usage over half of vision's 3/4.
  EXPECT_THAT(share.QueueExponent("det"), DoubleNear(0.25 / (0.75 * 0.5), 1e-12));
  EXPECT_THAT(share.QueueExponent("seg"), DoubleNear(0.25 / (0.75 * 0.5), 1e-12));
  EXPECT_THAT(share.QueueExponent("nlp"), DoubleNear(0.5 / 0.25, 1e-12));
  EXPECT_DOUBLE_EQ(share.QueueExponent("vision"), 0.0) << "no jobs of its own: no entry";
}

TEST(FairShareTest, SharesStillWeighDecayedUsage) {
  ClusterState state(ClusterOptions{Duration::Seconds(1000)});
  state.SetQuotas(QuotaTree::Make({Queue("a", 1), Queue("b", 2)}).value());
  state.AddEndedRun("u", "a", WholeGpus(1), At(0), At(1000));
  state.AddEndedRun("u", "b", WholeGpus(1), At(3000), At(4000));
  // Three half-lives later a's run counts an eighth of b's: a has 1/9 of
  // the usage on 1/3 of the shares, b 8/9 on 2/3.
  const FairShare share(state, At(4000));
  EXPECT_THAT(share.QueueExponent("a"), DoubleNear((1.0 / 9) / (1.0 / 3), 1e-9));
  EXPECT_THAT(share.QueueExponent("b"), DoubleNear((8.0 / 9) / (2.0 / 3), 1e-9));
}

// One free GPU, a job of queue b (id 1) and one of queue a (id 2), both
// queues with the same usage: who starts?
JobId FirstOf(const std::string& policy, int64_t shares_of_a, ClusterState::UserShares users) {
  ClusterState state;
  AddNodes(state, 1, 1);
  state.SetQuotas(QuotaTree::Make({Queue("a", shares_of_a), Queue("b", 1)}).value());
  state.SetUserShares(std::move(users));
  state.AddEndedRun("bob", "b", WholeGpus(1), At(0), At(1000));
  state.AddEndedRun("alice", "a", WholeGpus(1), At(0), At(1000));
  state.Submit(NewJob(1).User("bob").Queue("b").Submit(1000), At(1000));
  state.Submit(NewJob(2).User("alice").Queue("a").Submit(1000), At(1000));
  const std::vector<JobId> started =
      StartedIds(Decide(state, At(1000), testing::NamedPolicy(policy)));
  return started.empty() ? JobId{} : started.front();
}

TEST(FairShareTest, QueueSharesChangeTheMultifactorOrder) {
  EXPECT_EQ(FirstOf("slurm", 1, NoShares()), Id(1)) << "equal shares: the lower id";
  EXPECT_EQ(FirstOf("slurm", 3, NoShares()), Id(2)) << "a's share is larger";
}

TEST(FairShareTest, SharesChangeTheBerthOrder) {
  EXPECT_EQ(FirstOf("berth", 1, NoShares()), Id(1));
  EXPECT_EQ(FirstOf("berth", 3, NoShares()), Id(2)) << "queue shares";
  EXPECT_EQ(FirstOf("berth", 1, {{"alice", 4}}), Id(2)) << "user shares";
}

}  // namespace
}  // namespace berth::core
