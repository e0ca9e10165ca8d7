// sacctmgr show user (issue 29, minimal): a user's accounts are the queues
// they may submit to, in sacctmgr's column and parsable layouts.
#include "cli/slurm/sacctmgr_format.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace berth::cli::slurm {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const json kQueues = json::parse(R"({"queues": [
  {"name": "open"},
  {"name": "vision", "default": true},
  {"name": "private", "allow_users": ["carol"]},
  {"name": "lab", "allow_groups": ["ml"]},
  {"name": "lab-night", "parent": "lab"}
]})");

TEST(SacctmgrTest, AUsersAccountsAreTheQueuesTheyMaySubmitTo) {
  EXPECT_THAT(UserAccounts(kQueues, "alice", {}), ElementsAre("vision", "open"))
      << "the default first; a child keeps its parent's rules";
  EXPECT_THAT(UserAccounts(kQueues, "carol", {}), ElementsAre("vision", "open", "private"));
  EXPECT_THAT(UserAccounts(kQueues, "bob", {"ml"}),
              ElementsAre("vision", "open", "lab", "lab-night"));
  EXPECT_THAT(UserAccounts(json::object(), "alice", {}), ElementsAre("default"))
      << "no queues: Berth's one implicit queue";
}

TEST(SacctmgrTest, PrintsSlurmsLayouts) {
  const SacctmgrUser alice{"alice", {"vision", "open"}, false};
  EXPECT_EQ(*SacctmgrUsers({alice}, {"account"}, SacctmgrLayout::kParsable2, true),
            "Account\nvision\nopen\n");
  EXPECT_EQ(*SacctmgrUsers({alice}, {"User", "Account"}, SacctmgrLayout::kParsable, false),
            "alice|vision|\nalice|open|\n");
  EXPECT_EQ(*SacctmgrUsers({alice}, {"Account"}, SacctmgrLayout::kColumns, true),
            "   Account \n---------- \n    vision \n      open \n");
  const SacctmgrUser root{"root", {"a-very-long-queue"}, true};
  EXPECT_EQ(*SacctmgrUsers({root}, {}, SacctmgrLayout::kColumns, true),
            "      User   Def Acct      Admin \n"
            "---------- ---------- ---------- \n"
            "      root a-very-lo+ Administr+ \n")
      << "Slurm's default fields, one row per user; long values cut with +";
  EXPECT_THAT(
      SacctmgrUsers({alice}, {"Coordinators"}, SacctmgrLayout::kParsable2, true).status().message(),
      HasSubstr("Invalid field requested: \"Coordinators\""));
}

}  // namespace
}  // namespace berth::cli::slurm
