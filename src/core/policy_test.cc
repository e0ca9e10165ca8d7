// The policy table: which names build where, and what a live policy may stop.
#include "core/policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace berth::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// Issue 30, item 4: oracle policies read true durations, so a server (the
// default deployment) cannot run them; the message names the live ones.
TEST(PolicyTest, LiveRefusesOraclePoliciesNamingTheLiveOnes) {
  for (std::string_view name : {"sjf-oracle", "srtf-oracle", "berth-oracle"}) {
    Result<Policy> live = MakePolicy(name);
    ASSERT_FALSE(live.ok()) << name;
    EXPECT_THAT(live.status().message(), HasSubstr("'" + std::string(name) + "'"));
    EXPECT_THAT(live.status().message(), HasSubstr("only the simulator"));
    EXPECT_THAT(live.status().message(), HasSubstr("fifo, las, slurm, qssf, berth, berth-gittins"));
    EXPECT_THAT(live.status().message(), Not(HasSubstr("oracle,")));
    EXPECT_TRUE(MakePolicy(name, InSimulation()).ok()) << name;
  }
  EXPECT_THAT(PolicyNames(Deployment::kLive),
              ElementsAre("fifo", "las", "slurm", "qssf", "berth", "berth-gittins"));
  EXPECT_EQ(PolicyNames().size(), 9u);
}

// Issue 30, item 4: whatever scope a reference policy has in simulation,
// live it stops only preemptible jobs.
TEST(PolicyTest, EveryLivePolicyStopsOnlyPreemptibleJobs) {
  for (std::string_view name : PolicyNames(Deployment::kLive)) {
    Result<Policy> live = MakePolicy(name);
    ASSERT_TRUE(live.ok()) << name;
    EXPECT_EQ(live->preemption_scope, PreemptionScope::kPreemptibleOnly) << name;
  }
  Result<Policy> reference = MakePolicy("las", InSimulation());
  ASSERT_TRUE(reference.ok());
  EXPECT_EQ(reference->preemption_scope, PreemptionScope::kAny);
}

}  // namespace
}  // namespace berth::core
