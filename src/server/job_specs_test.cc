// The job specs a submission names in words: Slurm's array specs and
// dependency strings (server/job_specs.h).
#include "server/job_specs.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace berth::server {
namespace {

using store::Dependency;
using store::DependencyKind;

// --- arrays ---

TEST(ParseArraySpec, SlurmForms) {
  struct Case {
    std::string spec;
    std::vector<int32_t> indices;
    std::optional<int32_t> max_running;
  };
  const std::vector<Case> cases = {
      {"0-9", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, std::nullopt},
      {"1,3,5-7", {1, 3, 5, 6, 7}, std::nullopt},
      {"0-15:4", {0, 4, 8, 12}, std::nullopt},
      {"0-9%2", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 2},
      {"7", {7}, std::nullopt},
      {"3,1,3,2-3", {1, 2, 3}, std::nullopt},  // sorted, without duplicates
      {"4-4", {4}, std::nullopt},
      {"1-10:3%1", {1, 4, 7, 10}, 1},
      {"007", {7}, std::nullopt},
  };
  for (const Case& c : cases) {
    auto parsed = ParseArraySpec(c.spec);
    ASSERT_TRUE(parsed.ok()) << c.spec << ": " << parsed.status().ToString();
    EXPECT_EQ(parsed->first, c.indices) << c.spec;
    EXPECT_EQ(parsed->second, c.max_running) << c.spec;
  }
}

TEST(ParseArraySpec, LimitsAreInclusiveOfTheLastIndex) {
  auto full = ParseArraySpec("0-9999");
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->first.size(), 10000u);
  EXPECT_EQ(full->first.back(), 9999);
  EXPECT_TRUE(ParseArraySpec("0-9%10000").ok());
  EXPECT_EQ(ParseArraySpec("0-10", 10).status().message(), "index 10 is over the limit 9");
}

TEST(ParseArraySpec, RejectsMalformedSpecs) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"5-1", "range 5-1 is decreasing"},
      {"0-99999", "index 99999 is over the limit 9999"},
      {"99999999999999999999", "index 4611686018427387904 is over the limit 9999"},
      {"1-3%0", "%N (at most N at once) must be 1..10000, got '0'"},
      {"1-3%", "%N (at most N at once) must be 1..10000, got ''"},
      {"1-3%x", "%N (at most N at once) must be 1..10000, got 'x'"},
      {"0-15:0", "step must be >= 1, got 0"},
      {"", "empty spec; expected e.g. 0-9, 1,3,5-7, 0-15:4 or 0-9%2"},
      {"1,,3",
       "expected INDEX, FIRST-LAST or FIRST-LAST:STEP (comma-separated, then an "
       "optional %N), got ''"},
      {"-1",
       "expected INDEX, FIRST-LAST or FIRST-LAST:STEP (comma-separated, then an "
       "optional %N), got '-1'"},
      {"1:2",
       "expected INDEX, FIRST-LAST or FIRST-LAST:STEP (comma-separated, then an "
       "optional %N), got '1:2'"},
      {" 1",
       "expected INDEX, FIRST-LAST or FIRST-LAST:STEP (comma-separated, then an "
       "optional %N), got ' 1'"},
      {"1-2-3",
       "expected INDEX, FIRST-LAST or FIRST-LAST:STEP (comma-separated, then an "
       "optional %N), got '1-2-3'"},
      {"%2",
       "expected INDEX, FIRST-LAST or FIRST-LAST:STEP (comma-separated, then an "
       "optional %N), got ''"},
      {std::string(1025, '1'), "spec of 1025 characters, limit 1024"},
  };
  for (const auto& [spec, message] : cases) {
    auto parsed = ParseArraySpec(spec);
    ASSERT_FALSE(parsed.ok()) << spec;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(parsed.status().message(), message) << spec;
  }
}

TEST(ParseArraySpec, ManyOverlappingRangesStayWithinTheLimit) {
  std::string spec = "0-9999";
  while (spec.size() + 7 <= kMaxArraySpecChars) spec += ",0-9999";
  auto parsed = ParseArraySpec(spec);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->first.size(), 10000u);
}

// --- dependencies ---

TEST(ParseDependency, KindsAndBareIds) {
  const std::vector<std::pair<std::string, Dependency>> cases = {
      {"afterok:12", {DependencyKind::kAfterOk, core::JobId{12}}},
      {"afterany:12", {DependencyKind::kAfterAny, core::JobId{12}}},
      {"afternotok:12", {DependencyKind::kAfterNotOk, core::JobId{12}}},
      {"12", {DependencyKind::kAfterOk, core::JobId{12}}},
      {"12:afterok", {DependencyKind::kAfterOk, core::JobId{12}}},  // the CLI's --after ID[:KIND]
      {"12:afternotok", {DependencyKind::kAfterNotOk, core::JobId{12}}},
      {"4611686018427387903", {DependencyKind::kAfterOk, core::JobId{4611686018427387903}}},
  };
  for (const auto& [text, dependency] : cases) {
    Result<Dependency> parsed = ParseDependency(text);
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status().ToString();
    EXPECT_EQ(*parsed, dependency) << text;
  }
}

TEST(ParseDependency, RejectsMalformedDependencies) {
  const std::string format =
      "expected afterok:ID, afterany:ID, afternotok:ID, ID (also ID:KIND) or singleton, got ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"afterwhen:3", "unknown kind 'afterwhen' (known: afterany, afternotok, afterok)"},
      {"3:afterwhen", "unknown kind 'afterwhen' (known: afterany, afternotok, afterok)"},
      {"afterok:-1", "job id must be a positive integer, got '-1'"},
      {"afterok:0", "job id must be a positive integer, got '0'"},
      {"afterok:", "job id must be a positive integer, got ''"},
      {"afterok:1.5", "job id must be a positive integer, got '1.5'"},
      {"afterok:99999999999999999999",
       "job id must be a positive integer, got '99999999999999999999'"},
      {"", format + "''"},
      {"afterok", format + "'afterok'"},
      {"-1", format + "'-1'"},
      {"afterok:1:2", format + "'afterok:1:2'"},
      {"AFTEROK:1", "unknown kind 'AFTEROK' (known: afterany, afternotok, afterok)"},
  };
  for (const auto& [text, message] : cases) {
    Result<Dependency> parsed = ParseDependency(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().message(), message) << text;
  }
}

}  // namespace
}  // namespace berth::server
