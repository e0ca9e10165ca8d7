// `berth usage --from/--to`: dates, ISO date-times and unix seconds.
#include "cli/time_arg.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace berth::cli {
namespace {

using ::testing::HasSubstr;

TEST(TimeArgTest, DatesDateTimesAndUnixSeconds) {
  const std::vector<std::pair<std::string, int64_t>> cases = {
      {"1796256000", 1796256000},
      {"0", 0},
      {"2026-12-03", 1796256000},
      {"1970-01-01", 0},
      {"2024-02-29", 1709164800},
      {"2026-12-03T14:30", 1796256000 + 14 * 3600 + 30 * 60},
      {"2026-12-03T14:30:05Z", 1796256000 + 14 * 3600 + 30 * 60 + 5},
      {"2026-12-03 14:30:05", 1796256000 + 14 * 3600 + 30 * 60 + 5},
      {"2026-12-03T16:30:05+02:00", 1796256000 + 14 * 3600 + 30 * 60 + 5},
      {"2026-12-03T09:00:05-0530", 1796256000 + 14 * 3600 + 30 * 60 + 5},
  };
  for (const auto& [text, seconds] : cases) {
    Result<int64_t> parsed = ParseTimeArg(text, "--from");
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status().ToString();
    EXPECT_EQ(*parsed, seconds) << text;
  }
}

TEST(TimeArgTest, AnythingElseNamesTheFlagAndTheForms) {
  for (const std::string bad :
       {"", "yesterday", "2026-13-01", "2026-02-30", "2026-12-3", "2026-12-03T25:00",
        "2026-12-03T14:30+2", "-5", "12:00", "2026-12-03T14:30:05Zjunk"}) {
    Result<int64_t> parsed = ParseTimeArg(bad, "--from");
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_THAT(parsed.status().message(), HasSubstr("--from")) << bad;
    EXPECT_THAT(parsed.status().message(), HasSubstr("2026-12-03")) << bad;
  }
}

}  // namespace
}  // namespace berth::cli
