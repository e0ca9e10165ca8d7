#include "cli/slurm/array_env.h"

#include <gtest/gtest.h>

namespace berth::cli::slurm {
namespace {

using Env = std::map<std::string, std::string>;

Env Expect(std::string min, std::string max, std::string count, std::string step) {
  return {{"SLURM_ARRAY_TASK_MIN", min},
          {"SLURM_ARRAY_TASK_MAX", max},
          {"SLURM_ARRAY_TASK_COUNT", count},
          {"SLURM_ARRAY_TASK_STEP", step}};
}

TEST(ArrayEnvironmentTest, RangesListsAndStepsAsSlurmSetsThem) {
  EXPECT_EQ(ArrayEnvironment("0-3%2"), Expect("0", "3", "4", "1"));
  EXPECT_EQ(ArrayEnvironment("0-15:4"), Expect("0", "12", "4", "4"));
  EXPECT_EQ(ArrayEnvironment("1,3,5-7"), Expect("1", "7", "5", "1"));
  EXPECT_EQ(ArrayEnvironment("2,4,6"), Expect("2", "6", "3", "2"));
  EXPECT_EQ(ArrayEnvironment("7"), Expect("7", "7", "1", "1"));
}

TEST(ArrayEnvironmentTest, ASpecItCannotReadGivesNone) {
  EXPECT_FALSE(ArrayEnvironment(""));
  EXPECT_FALSE(ArrayEnvironment("a-b"));
  EXPECT_FALSE(ArrayEnvironment("3-1"));
  EXPECT_FALSE(ArrayEnvironment("0-9:0"));
}

}  // namespace
}  // namespace berth::cli::slurm
