#include "agent/fake_gpus.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace berth::agent {
namespace {

using ::testing::HasSubstr;

TEST(FakeGpusTest, ParsesCountAndModel) {
  Result<FakeGpuSpec> spec = ParseFakeGpus("8xH100-80GB");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->count, 8);
  EXPECT_EQ(spec->model, "H100-80GB");
  EXPECT_EQ(spec->memory_mib, 80 * 1024);
  EXPECT_EQ(spec->groups, 1);

  Result<FakeGpuSpec> plain = ParseFakeGpus("2xL4");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->model, "L4");
  EXPECT_EQ(plain->memory_mib, 0);
}

TEST(FakeGpusTest, ErrorsNameTheFlagAndTheValue) {
  const struct {
    std::string text;
    int32_t groups;
    std::string message;
  } cases[] = {
      {"", 1, "--fake-gpus: expected COUNTxMODEL such as 8xH100-80GB, got ''"},
      {"H100", 1, "got 'H100'"},
      {"8x", 1, "got '8x'"},
      {"ax100", 1, "got 'ax100'"},
      {"0xH100", 1, "--fake-gpus: count must be 1..64, got 0 in '0xH100'"},
      {"65xH100", 1, "count must be 1..64, got 65"},
      {"8xH 100", 1, "--fake-gpus: the model may hold letters"},
      {"8xH100", 3, "--fake-topology: groups must divide the 8 GPUs evenly, got 3"},
      {"8xH100", 0, "--fake-topology"},
      {"8xH100", 16, "--fake-topology"},
  };
  for (const auto& c : cases) {
    Result<FakeGpuSpec> spec = ParseFakeGpus(c.text, c.groups);
    ASSERT_FALSE(spec.ok()) << c.text;
    EXPECT_EQ(spec.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(spec.status().message(), HasSubstr(c.message)) << c.text;
  }
}

TEST(FakeGpusTest, TopologyMakesContiguousGroups) {
  FakeGpuInventory inventory(ParseFakeGpus("8xA100-40GB", 2).value());
  Result<GpuInventoryInfo> info = inventory.Discover();
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->gpu_type, "A100-40GB");
  ASSERT_EQ(info->gpus.size(), 8u);
  for (const GpuInfo& gpu : info->gpus) {
    EXPECT_EQ(gpu.interconnect_group, gpu.index < 4 ? 0 : 1) << gpu.index;
    EXPECT_EQ(gpu.memory_mib, 40 * 1024);
    EXPECT_TRUE(gpu.healthy);
  }
  EXPECT_NE(info->gpus[0].uuid, info->gpus[1].uuid);
}

TEST(FakeGpusTest, HealthCanBeToggled) {
  FakeGpuInventory inventory(ParseFakeGpus("4xH100-80GB").value());
  inventory.SetHealthy(2, false);
  std::vector<GpuSample> samples = inventory.Sample().value();
  ASSERT_EQ(samples.size(), 4u);
  EXPECT_FALSE(samples[2].healthy);
  EXPECT_TRUE(samples[1].healthy);
  inventory.SetHealthy(2, true);
  EXPECT_TRUE(inventory.Sample().value()[2].healthy);
}

TEST(FakeGpusTest, DeviceFilesOnePerGpu) {
  FakeGpuSpec spec = ParseFakeGpus("2xL4").value();
  spec.device_paths = ParseFakeGpuDevices("/tmp/d/gpu0,/tmp/d/gpu1", spec).value();
  FakeGpuInventory inventory(spec);
  const GpuInventoryInfo info = inventory.Discover().value();
  EXPECT_EQ(info.gpus[0].device_path, "/tmp/d/gpu0");
  EXPECT_EQ(info.gpus[1].device_path, "/tmp/d/gpu1");
  EXPECT_TRUE(ParseFakeGpuDevices("", spec).value().empty());
  EXPECT_THAT(
      ParseFakeGpuDevices("/tmp/d/gpu0", spec).status().message(),
      HasSubstr("--fake-gpu-devices: expected 2 comma-separated paths, one per GPU, got 1"));
  EXPECT_THAT(ParseFakeGpuDevices("/a,b", spec).status().message(),
              HasSubstr("expected absolute paths, got 'b'"));
}

}  // namespace
}  // namespace berth::agent
