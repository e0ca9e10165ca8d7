// Slurm's --signal as sbatch reads it (issue 29).
#include "cli/signal_option.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace berth::cli {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

json Parsed(std::string_view text) {
  Result<json> parsed = ParseSignalOption(text, "--signal");
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return parsed.ok() ? *parsed : json();
}

TEST(SignalOptionTest, BatchOnlyWithSeconds) {
  EXPECT_EQ(Parsed("B:USR1@90"), (json{{"name", "USR1"}, {"before_s", 90}, {"batch_only", true}}));
}

TEST(SignalOptionTest, ANameAloneIsSixtySecondsToEveryProcess) {
  EXPECT_EQ(Parsed("USR1"), (json{{"name", "USR1"}, {"before_s", 60}, {"batch_only", false}}));
}

TEST(SignalOptionTest, SigPrefixesAndNumbersAreTheSameSignal) {
  EXPECT_EQ(Parsed("SIGUSR1@5"), (json{{"name", "USR1"}, {"before_s", 5}, {"batch_only", false}}));
  EXPECT_EQ(Parsed("10@5"), (json{{"name", "USR1"}, {"before_s", 5}, {"batch_only", false}}));
  EXPECT_EQ(Parsed("B:TERM@0").at("name"), "TERM");
}

TEST(SignalOptionTest, BadOnesAreRefusedNamingTheOption) {
  for (std::string_view bad : {"", "USR9", "B:", "@5", "USR1@", "USR1@-1", "USR1@x", "USR1@65536",
                               "R:USR1@5", "X:USR1", "99"}) {
    Result<json> parsed = ParseSignalOption(bad, "--signal");
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_THAT(parsed.status().message(), HasSubstr("--signal")) << bad;
  }
}

}  // namespace
}  // namespace berth::cli
