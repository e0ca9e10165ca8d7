// The NVML path against the in-tree stand-in libnvidia-ml.so.1, loaded by
// dlopen for real (by path, so no LD_LIBRARY_PATH is needed).
#include "agent/nvml_inventory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/testing/test_util.h"

namespace berth::agent {
namespace {

using ::testing::HasSubstr;
using testing::ScopedEnv;

std::string StandIn(const std::string& variant) {
  return std::string(NVML_STANDIN_DIR) + "/" + variant + "/libnvidia-ml.so.1";
}

std::unique_ptr<NvmlInventory> OpenFull() {
  Result<std::unique_ptr<NvmlInventory>> nvml = NvmlInventory::Open({StandIn("full"), ""});
  EXPECT_TRUE(nvml.ok()) << nvml.status().ToString();
  return nvml.ok() ? std::move(*nvml) : nullptr;
}

TEST(NvmlInventoryTest, DiscoversDevicesThroughDlopen) {
  ScopedEnv count("NVML_STANDIN_COUNT", "4");
  ScopedEnv utilization("NVML_STANDIN_UTILIZATION", "37");
  std::unique_ptr<NvmlInventory> nvml = OpenFull();
  ASSERT_NE(nvml, nullptr);
  Result<GpuInventoryInfo> info = nvml->Discover();
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->gpu_type, "H100-80GB");
  EXPECT_EQ(info->driver, "driver 550.54.15-standin");
  ASSERT_EQ(info->gpus.size(), 4u);
  for (const GpuInfo& gpu : info->gpus) {
    EXPECT_EQ(gpu.name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(gpu.memory_mib, 81559);
    EXPECT_EQ(gpu.interconnect_group, 0);  // one NVLink island
    EXPECT_THAT(gpu.uuid, HasSubstr("GPU-"));
    EXPECT_TRUE(gpu.healthy);
  }
  std::vector<GpuSample> samples = nvml->Sample().value();
  ASSERT_EQ(samples.size(), 4u);
  EXPECT_EQ(samples[3].utilization_percent, 37);
  EXPECT_EQ(samples[3].memory_total_mib, 81559);
  EXPECT_EQ(samples[3].memory_used_mib, 81559 / 4);
  EXPECT_TRUE(samples[3].healthy);
}

TEST(NvmlInventoryTest, DeviceFilesFollowTheMinorNumberNotTheIndex) {
  ScopedEnv count("NVML_STANDIN_COUNT", "2");
  ScopedEnv minor("NVML_STANDIN_MINOR_BASE", "4");
  std::unique_ptr<NvmlInventory> nvml = OpenFull();
  ASSERT_NE(nvml, nullptr);
  const GpuInventoryInfo info = nvml->Discover().value();
  EXPECT_EQ(info.gpus[0].device_path, "/dev/nvidia4");
  EXPECT_EQ(info.gpus[1].device_path, "/dev/nvidia5");
}

TEST(NvmlInventoryTest, InterconnectGroupsFromNvlinkThenPcie) {
  {
    ScopedEnv count("NVML_STANDIN_COUNT", "8");
    ScopedEnv nvlink("NVML_STANDIN_NVLINK_GROUPS", "2");
    std::unique_ptr<NvmlInventory> nvml = OpenFull();
    ASSERT_NE(nvml, nullptr);
    const GpuInventoryInfo info = nvml->Discover().value();
    for (const GpuInfo& gpu : info.gpus) EXPECT_EQ(gpu.interconnect_group, gpu.index / 4);
  }
  {
    ScopedEnv count("NVML_STANDIN_COUNT", "8");
    ScopedEnv nvlink("NVML_STANDIN_NVLINK_GROUPS", "0");
    ScopedEnv pcie("NVML_STANDIN_PCIE_GROUPS", "4");
    std::unique_ptr<NvmlInventory> nvml = OpenFull();
    ASSERT_NE(nvml, nullptr);
    const GpuInventoryInfo info = nvml->Discover().value();
    for (const GpuInfo& gpu : info.gpus) EXPECT_EQ(gpu.interconnect_group, gpu.index / 2);
  }
}

TEST(NvmlInventoryTest, EccErrorsAndCriticalXidsMarkGpusUnhealthy) {
  ScopedEnv count("NVML_STANDIN_COUNT", "4");
  ScopedEnv ecc("NVML_STANDIN_ECC", "1:2");
  // 13 is an application's fault (ignored), 79 a GPU fallen off the bus.
  ScopedEnv xid("NVML_STANDIN_XID", "2:13,3:79");
  std::unique_ptr<NvmlInventory> nvml = OpenFull();
  ASSERT_NE(nvml, nullptr);
  ASSERT_TRUE(nvml->Discover().ok());
  std::vector<GpuSample> samples = nvml->Sample().value();
  EXPECT_TRUE(samples[0].healthy);
  EXPECT_FALSE(samples[1].healthy);
  EXPECT_EQ(samples[1].health_detail, "uncorrected ECC errors: 2");
  EXPECT_TRUE(samples[2].healthy);
  EXPECT_FALSE(samples[3].healthy);
  EXPECT_EQ(samples[3].health_detail, "critical XID 79");
  // XIDs are sticky: the event came once, the GPU stays out.
  samples = nvml->Sample().value();
  EXPECT_FALSE(samples[3].healthy);
}

TEST(NvmlInventoryTest, LostGpuIsUnhealthy) {
  ScopedEnv count("NVML_STANDIN_COUNT", "2");
  ScopedEnv lost("NVML_STANDIN_LOST", "1");
  std::unique_ptr<NvmlInventory> nvml = OpenFull();
  ASSERT_NE(nvml, nullptr);
  const GpuInventoryInfo info = nvml->Discover().value();
  EXPECT_FALSE(info.gpus[1].healthy);
  EXPECT_FALSE(nvml->Sample().value()[1].healthy);
}

TEST(NvmlInventoryTest, InitFailureCarriesNvmlsMessage) {
  ScopedEnv error("NVML_STANDIN_INIT_ERROR", "9");
  Result<std::unique_ptr<NvmlInventory>> nvml = NvmlInventory::Open({StandIn("full"), ""});
  ASSERT_FALSE(nvml.ok());
  EXPECT_EQ(nvml.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(nvml.status().message(), "NVML: nvmlInit failed: Driver Not Loaded (code 9)");
}

TEST(NvmlInventoryTest, LegacyLibraryWithoutV2NamesOrOptionalFunctions) {
  ScopedEnv count("NVML_STANDIN_COUNT", "3");
  ScopedEnv name("NVML_STANDIN_NAME", "NVIDIA H200");
  ScopedEnv memory("NVML_STANDIN_MEMORY_MIB", "143771");
  Result<std::unique_ptr<NvmlInventory>> nvml = NvmlInventory::Open({StandIn("legacy"), ""});
  ASSERT_TRUE(nvml.ok()) << nvml.status().ToString();
  const GpuInventoryInfo info = (*nvml)->Discover().value();
  EXPECT_EQ(info.gpu_type, "H200-140GB");
  EXPECT_EQ(info.driver, "driver unknown");
  ASSERT_EQ(info.gpus.size(), 3u);
  for (const GpuInfo& gpu : info.gpus) EXPECT_EQ(gpu.interconnect_group, gpu.index);
  // Without nvmlDeviceGetMinorNumber: the index.
  EXPECT_EQ(info.gpus[2].device_path, "/dev/nvidia2");
  std::vector<GpuSample> samples = (*nvml)->Sample().value();
  EXPECT_EQ(samples[0].utilization_percent, 0);
  EXPECT_TRUE(samples[0].healthy);
}

TEST(NvmlInventoryTest, GpuTypeOverride) {
  Result<std::unique_ptr<NvmlInventory>> nvml = NvmlInventory::Open({StandIn("full"), "H100-SXM"});
  ASSERT_TRUE(nvml.ok());
  EXPECT_EQ((*nvml)->Discover().value().gpu_type, "H100-SXM");
}

TEST(NvmlInventoryTest, MissingRequiredSymbolIsNamed) {
  Result<std::unique_ptr<NvmlInventory>> nvml = NvmlInventory::Open({StandIn("broken"), ""});
  ASSERT_FALSE(nvml.ok());
  EXPECT_EQ(nvml.status().code(), StatusCode::kInternal);
  EXPECT_THAT(nvml.status().message(), HasSubstr("does not export nvmlDeviceGetMemoryInfo"));
}

TEST(NvmlInventoryTest, MissingLibraryIsUnavailable) {
  Result<std::unique_ptr<NvmlInventory>> nvml =
      NvmlInventory::Open({"/nonexistent/libnvidia-ml.so.1", ""});
  ASSERT_FALSE(nvml.ok());
  EXPECT_EQ(nvml.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(nvml.status().message(),
              HasSubstr("NVML: cannot load /nonexistent/libnvidia-ml.so.1"));
}

TEST(NvmlInventoryTest, GpuTypeFromDriverNames) {
  EXPECT_EQ(GpuTypeFromName("NVIDIA H100 80GB HBM3", 81559), "H100-80GB");
  EXPECT_EQ(GpuTypeFromName("NVIDIA A100-SXM4-80GB", 81920), "A100-SXM4-80GB");
  EXPECT_EQ(GpuTypeFromName("NVIDIA H200", 143771), "H200-140GB");
  EXPECT_EQ(GpuTypeFromName("Tesla V100-SXM2-16GB", 16160), "V100-SXM2-16GB");
  EXPECT_EQ(GpuTypeFromName("NVIDIA L4", 0), "L4");
  EXPECT_EQ(GpuTypeFromName("", 0), "unknown");
}

}  // namespace
}  // namespace berth::agent
