#include "sim/packing.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "sim/pai2023.h"

namespace berth::sim {
namespace {

PackTask Task(int64_t gpu_milli, int64_t cores = 0, std::string gpu_type = "") {
  PackTask task;
  task.shape.gpu = core::MilliGpu(gpu_milli);
  task.shape.cpu = core::Cores(cores);
  task.gpu_type = std::move(gpu_type);
  return task;
}

core::NodeSpec Node(const std::string& name, int gpus, int64_t cores = 64,
                    const std::string& type = "V100") {
  return core::MakeNodeSpec(name, type, gpus, core::Cores(cores), core::MemoryMiB(1 << 20));
}

PackResult PackOk(const PackInput& input, PackRule rule) {
  PackOptions options;
  options.rule = rule;
  Result<PackResult> result = Pack(input, options);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? std::move(result).value() : PackResult{};
}

TEST(PackTest, RepeatsTheListUntilAPassPlacesNothing) {
  PackInput input;
  input.nodes = {Node("n0", 2)};
  input.tasks = {Task(1000)};
  for (PackRule rule : {PackRule::kBestFit, PackRule::kBerth}) {
    SCOPED_TRACE(PackRuleName(rule));
    const PackResult result = PackOk(input, rule);
    EXPECT_EQ(result.placed_per_pass, (std::vector<int64_t>{1, 1, 0}));
    EXPECT_EQ(result.passes, 3);
    EXPECT_EQ(result.pods_placed, 2);
    EXPECT_EQ(result.total_gpus, 2);
    EXPECT_EQ(result.allocated_gpu_milli, 2000);
    EXPECT_EQ(result.unallocated_gpu_share, 0.0);
    EXPECT_EQ(result.stop, PackStop::kPassPlacedNothing);
  }
}

TEST(PackTest, CpuAndSharesCountAndCpuCanRunOut) {
  PackInput input;
  input.nodes = {Node("n0", 1, /*cores=*/2)};
  input.tasks = {Task(400, 1)};
  const PackResult result = PackOk(input, PackRule::kBestFit);
  // Two 0.4 shares use both cores; 0.2 of the GPU stays unallocatable.
  EXPECT_EQ(result.pods_placed, 2);
  EXPECT_EQ(result.allocated_gpu_milli, 800);
  EXPECT_EQ(result.allocated_cpu_milli, 2000);
  EXPECT_EQ(result.total_cpu_milli, 2000);
  EXPECT_DOUBLE_EQ(result.unallocated_gpu_share, 0.2);
}

TEST(PackTest, TasksThatCanNeverFitAreCountedNotDropped) {
  PackInput input;
  input.nodes = {Node("n0", 8), Node("n1", 2, 64, "T4")};
  input.tasks = {Task(16000), Task(1000, 0, "H100"), Task(1000, 128), Task(2000, 0, "T4")};
  const PackResult result = PackOk(input, PackRule::kBerth);
  EXPECT_EQ(result.never_fit.at("larger than any node"), 2);
  EXPECT_EQ(result.never_fit.at("gpu_spec names no node's model"), 1);
  // Only the 2-GPU T4 task is ever placed, once: it fills the T4 node.
  EXPECT_EQ(result.pods_placed, 1);
  EXPECT_EQ(result.allocated_gpu_milli, 2000);
  EXPECT_DOUBLE_EQ(result.unallocated_gpu_share, 0.8);
}

TEST(PackTest, FragmentationAwareRuleFillsWhatBestFitStrands) {
  // Two 1-GPU nodes; the list asks for 0.6, 0.3 and three 0.4 shares. Best
  // fit puts the 0.3 beside the 0.6 and strands 0.1 + 0.2. The berth rule
  // keeps a 0.4 hole beside the 0.6 (0.4 is the list's commonest share) and
  // fills both GPUs.
  PackInput input;
  input.nodes = {Node("a", 1), Node("b", 1)};
  input.tasks = {Task(600), Task(300), Task(400), Task(400), Task(400)};
  const PackResult best_fit = PackOk(input, PackRule::kBestFit);
  EXPECT_EQ(best_fit.allocated_gpu_milli, 1700);
  EXPECT_DOUBLE_EQ(best_fit.unallocated_gpu_share, 0.15);
  const PackResult berth = PackOk(input, PackRule::kBerth);
  EXPECT_EQ(berth.allocated_gpu_milli, 2000);
  EXPECT_EQ(berth.unallocated_gpu_share, 0.0);
  EXPECT_EQ(berth.placed_per_pass, (std::vector<int64_t>{4, 1, 0}));
}

TEST(PackTest, DuplicateNodeNamesAreAnError) {
  PackInput input;
  input.nodes = {Node("n0", 1), Node("n0", 1)};
  Result<PackResult> result = Pack(input, PackOptions{});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("'n0' listed twice"), std::string::npos);
}

TEST(PackTest, PassLimitStopsEarly) {
  PackInput input;
  input.nodes = {Node("n0", 8)};
  input.tasks = {Task(1000)};
  PackOptions options;
  options.max_passes = 3;
  Result<PackResult> result = Pack(input, options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->passes, 3);
  EXPECT_EQ(result->pods_placed, 3);
  EXPECT_EQ(result->stop, PackStop::kPassLimit);
}

// The acceptance check of issue 3 on the real PAI 2023 lists: Berth's
// fragmentation-aware placement leaves fewer GPUs unallocated than best fit.
TEST(PackRealListsTest, BerthLeavesFewerUnallocatedGpusThanBestFit) {
  const std::string dir = std::string(BERTH_SHARED_DIR) + "/data/traces/alibaba-pai-gpu-2023/";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << "missing shared lists " << dir;
  Result<Pai2023Load<Pai2023Pod>> pods = ReadPai2023Pods(dir + "openb_pod_list_default.csv");
  Result<Pai2023Load<Pai2023Node>> nodes = ReadPai2023Nodes(dir + "openb_node_list_gpu_node.csv");
  ASSERT_TRUE(pods.ok()) << pods.status().ToString();
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  const PackInput input = MakePackInput(nodes->items, pods->items);

  const PackResult best_fit = PackOk(input, PackRule::kBestFit);
  const PackResult berth = PackOk(input, PackRule::kBerth);
  for (const PackResult* result : {&best_fit, &berth}) {
    SCOPED_TRACE(PackRuleName(result->rule));
    EXPECT_EQ(result->nodes, 1213);
    EXPECT_EQ(result->total_gpus, 6212);
    EXPECT_TRUE(result->never_fit.empty());
    EXPECT_EQ(result->stop, PackStop::kPassPlacedNothing);
    EXPECT_GE(result->passes, 2);
    EXPECT_GT(result->pods_placed, 8152 / 2);
    EXPECT_LE(result->allocated_gpu_milli, 6212 * 1000);
  }
  EXPECT_LT(berth.unallocated_gpu_share, best_fit.unallocated_gpu_share);
  EXPECT_LT(berth.expected_fragmented_gpus, best_fit.expected_fragmented_gpus);
}

}  // namespace
}  // namespace berth::sim
