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

}  // namespace
}  // namespace berth::cli
