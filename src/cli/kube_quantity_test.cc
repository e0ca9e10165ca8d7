// Kubernetes quantities in Berth's units: exact from the text, rounded up.
#include "cli/kube_quantity.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace berth::cli {
namespace {

using ::testing::HasSubstr;

TEST(KubeQuantityTest, CpuAsMillicores) {
  const std::vector<std::pair<std::string, int64_t>> cases = {
      {"250m", 250},   {"500m", 500}, {"2", 2000},   {"0.5", 500},  {".5", 500},
      {"1.", 1000},    {"+1", 1000},  {"0", 0},      {"1.5", 1500}, {"0.0001", 1},
      {"1k", 1000000}, {"2e-3", 2},   {"100m", 100}, {"1E1", 10000}};
  for (const auto& [text, millicores] : cases) {
    Result<int64_t> parsed = KubeMilliCpu(text, "limits.cpu");
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status().ToString();
    EXPECT_EQ(*parsed, millicores) << text;
  }
}

TEST(KubeQuantityTest, MemoryAsMiBRoundedUp) {
  const std::vector<std::pair<std::string, int64_t>> cases = {
      {"1.5Gi", 1536},  {"128974848", 123},
      {"129e6", 124},   {"123Mi", 123},
      {"4Gi", 4096},    {"512Mi", 512},
      {"1G", 954},      {"1M", 1},
      {"1Ki", 1},       {"0", 0},
      {"1Ti", 1 << 20}, {"1048576", 1},
      {"1048577", 2},   {"2E", 2000000000000LL * 1000000 / 1048576 + 1}};
  for (const auto& [text, mib] : cases) {
    Result<int64_t> parsed = KubeMemoryMiB(text, "limits.memory");
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status().ToString();
    EXPECT_EQ(*parsed, mib) << text;
  }
}

TEST(KubeQuantityTest, WholeCounts) {
  EXPECT_EQ(KubeWholeCount("1", "gpu").value(), 1);
  EXPECT_EQ(KubeWholeCount("8", "gpu").value(), 8);
  EXPECT_EQ(KubeWholeCount("2000m", "gpu").value(), 2);
  EXPECT_THAT(KubeWholeCount("0.5", "limits.nvidia.com/gpu").status().message(),
              HasSubstr("limits.nvidia.com/gpu: expected a whole number, got '0.5'"));
}

TEST(KubeQuantityTest, MalformedOrHugeIsAnErrorNamingThePath) {
  for (const std::string bad : {"", "abc", "1.2.3", "5x", "1mi", "-1", "1e", "1e+", "m", ".",
                                "1 Gi", "1Gib", "1e1000", "99999999999999999999", "99999999Ei"}) {
    Result<int64_t> parsed = KubeMemoryMiB(bad, "spec.containers[0].resources.limits.memory");
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_THAT(parsed.status().message(),
                HasSubstr("spec.containers[0].resources.limits.memory: expected"))
        << bad;
  }
}

}  // namespace
}  // namespace berth::cli
