#include "protocol/output_pattern.h"

#include <gtest/gtest.h>

namespace berth::protocol {
namespace {

TEST(OutputPatternTest, SlurmsPatternsExpandForEachTask) {
  OutputNames names{42, "train", "alice", std::nullopt, std::nullopt, "gpu-07", 3};
  EXPECT_EQ(ExpandOutputPattern("%x-%j.out", names), "train-42.out");
  EXPECT_EQ(ExpandOutputPattern("logs/%u/%N.%t.log", names), "logs/alice/gpu-07.3.log");
  EXPECT_EQ(ExpandOutputPattern("100%%-%A_%a", names), "100%-42_4294967294");
  names.array_job = 40;
  names.array_index = 2;
  EXPECT_EQ(ExpandOutputPattern("slurm-%A_%a.out", names), "slurm-40_2.out");
  EXPECT_EQ(ExpandOutputPattern("plain.txt", names), "plain.txt");
}

TEST(OutputPatternTest, APatternNoTaskCouldExpandIsRefusedNamingTheField) {
  EXPECT_TRUE(CheckOutputPattern("%x-%j.out", "output").ok());
  EXPECT_TRUE(CheckOutputPattern("", "output").ok());
  EXPECT_EQ(CheckOutputPattern("run-%q.out", "error").message(),
            "error: unknown pattern %q (known: %j %x %u %A %a %N %t %%)");
  EXPECT_EQ(CheckOutputPattern("100%", "output").message(),
            "output: '%' at the end; write %% for a percent sign");
  EXPECT_EQ(CheckOutputPattern(std::string_view("a\0b", 3), "output").message(),
            "output: a file name cannot hold a NUL byte");
  // The refused character is quoted printably (found by the fuzzer).
  EXPECT_EQ(CheckOutputPattern("%\x7f-%j.out", "output").message(),
            "output: unknown pattern %\\x7f (known: %j %x %u %A %a %N %t %%)");
}

}  // namespace
}  // namespace berth::protocol
