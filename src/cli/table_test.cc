#include "cli/table.h"

#include <gtest/gtest.h>

#include "common/time_format.h"

namespace berth::cli {
namespace {

TEST(TableTest, ColumnsAlignAndColorsOnlyWhenAsked) {
  Table table({"ID", "STATE"});
  table.Add({{"7"}, {"running", "32"}});
  table.Add({{"1234"}, {"pending", "33"}});
  EXPECT_EQ(table.Render(false), "ID    STATE\n7     running\n1234  pending\n");
  EXPECT_NE(table.Render(true).find("\033[32mrunning\033[0m"), std::string::npos);
}

TEST(TableTest, ShortDurationsAndGpuSummaries) {
  EXPECT_EQ(ShortDuration(45), "45s");
  EXPECT_EQ(ShortDuration(125), "2m");
  EXPECT_EQ(ShortDuration(3 * 3600 + 5 * 60), "3h05m");
  EXPECT_EQ(ShortDuration(2 * 86400 + 4 * 3600), "2d04h");
  EXPECT_EQ(GpuSummary({{"gpu_milli", 4000}, {"tasks", 1}}), "4");
  EXPECT_EQ(GpuSummary({{"gpu_milli", 8000}, {"tasks", 2}}), "2x8");
  EXPECT_EQ(GpuSummary({{"gpu_milli", 500}, {"tasks", 1}}), "0.5");
}

TEST(TableTest, TimesRoundTripThroughRfc3339) {
  const core::Time time = core::Time::FromMicros(1'796'000'123'456'000);
  std::optional<core::Time> parsed = ParseRfc3339(FormatRfc3339(time));
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->micros(), 1'796'000'123'456'000);
  EXPECT_EQ(ParseRfc3339("2026-12-01T00:00:00Z")->micros() / 1'000'000, 1'796'083'200);
  EXPECT_FALSE(ParseRfc3339("yesterday").has_value());
  EXPECT_FALSE(ParseRfc3339("2026-13-01T00:00:00Z").has_value());
  EXPECT_FALSE(JsonTime(nlohmann::json(nullptr)).has_value());
}

// Issue 26: what a constraint can name, as `berth nodes` shows it.
TEST(TableTest, NodeFeaturesThenLabels) {
  EXPECT_EQ(NodeFeatures({{"features", {"ib", "nvlink"}}, {"labels", {{"rack", "r1"}}}}),
            "ib,nvlink,rack=r1");
  EXPECT_EQ(NodeFeatures({{"features", nlohmann::json::array()}, {"labels", {{"zone", "a"}}}}),
            "zone=a");
  EXPECT_EQ(
      NodeFeatures({{"features", nlohmann::json::array()}, {"labels", nlohmann::json::object()}}),
      "-");
  EXPECT_EQ(NodeFeatures({{"name", "an older server"}}), "-");
}

// Issue 26: the node tally of `berth why` on a line of its own.
TEST(TableTest, ClauseLines) {
  EXPECT_EQ(ClauseLines("waiting; 0 of 3 nodes can start it now: 2 have fewer; position 2", 2),
            "waiting\n  0 of 3 nodes can start it now: 2 have fewer\n  position 2");
  EXPECT_EQ(ClauseLines("held", 4), "held");
  EXPECT_EQ(ClauseLines("", 4), "");
}

}  // namespace
}  // namespace berth::cli
