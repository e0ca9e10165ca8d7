// The memory a job asking none gets in its queue (Slurm's DefMemPerGPU and
// DefMemPerCPU): which default applies to which task, and which queue's.
#include "core/default_memory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

namespace berth::core {
namespace {

using ::testing::HasSubstr;

DefaultMemory Defaults(std::optional<int64_t> per_gpu, std::optional<int64_t> per_cpu) {
  DefaultMemory defaults;
  if (per_gpu) defaults.per_gpu = MemoryMiB(*per_gpu);
  if (per_cpu) defaults.per_cpu = MemoryMiB(*per_cpu);
  return defaults;
}

QueueSpec Queue(std::string name, std::string parent, DefaultMemory defaults) {
  QueueSpec spec;
  spec.name = std::move(name);
  spec.parent = std::move(parent);
  spec.default_memory = defaults;
  return spec;
}

TEST(DefaultMemory, ATaskWithGpusGetsThePerGpuDefaultForEachOfThem) {
  const DefaultMemory defaults = Defaults(24576, 3072);
  EXPECT_EQ(DefaultTaskMemory(defaults, {WholeGpus(4), Cores(8), MemoryMiB(0)}),
            MemoryMiB(4 * 24576));
}

TEST(DefaultMemory, AShareOfAGpuGetsItsShareRoundedUp) {
  EXPECT_EQ(DefaultTaskMemory(Defaults(10, std::nullopt), {MilliGpu(250), Cores(1), MemoryMiB(0)}),
            MemoryMiB(3));
}

TEST(DefaultMemory, ATaskWithoutGpusGetsThePerCpuDefaultForEachWholeCpu) {
  const DefaultMemory defaults = Defaults(24576, 3072);
  EXPECT_EQ(DefaultTaskMemory(defaults, {MilliGpu(0), Cores(6), MemoryMiB(0)}),
            MemoryMiB(6 * 3072));
  // 1.5 CPUs hold two; a task asking no CPU still runs on one.
  EXPECT_EQ(DefaultTaskMemory(defaults, {MilliGpu(0), MilliCpu(1500), MemoryMiB(0)}),
            MemoryMiB(2 * 3072));
  EXPECT_EQ(DefaultTaskMemory(defaults, {MilliGpu(0), MilliCpu(0), MemoryMiB(0)}), MemoryMiB(3072));
}

TEST(DefaultMemory, ASlurmJobsNodeCountsACpuForEachOfItsTasks) {
  // -n 8 --ntasks-per-node=2: two Slurm tasks on each node, no CPUs asked.
  EXPECT_EQ(DefaultTaskMemory(Defaults(24576, 3072), {MilliGpu(0), MilliCpu(0), MemoryMiB(0)}, 2),
            MemoryMiB(2 * 3072));
  EXPECT_EQ(DefaultTaskMemory(Defaults(24576, 3072), {MilliGpu(0), Cores(6), MemoryMiB(0)}, 2),
            MemoryMiB(6 * 3072))
      << "the CPUs asked, when more";
  // -N 2 -n 3: Slurm lays out 2 + 1; each Berth node counts the larger.
  EXPECT_EQ(LeastCpusOfSlurmNode(std::vector<int32_t>{2, 1}), 2);
  EXPECT_EQ(LeastCpusOfSlurmNode({}), 1) << "not a Slurm job: the task's own CPU";
}

TEST(DefaultMemory, WithoutAPerGpuDefaultAGpuTaskGetsThePerCpuOne) {
  EXPECT_EQ(DefaultTaskMemory(Defaults(std::nullopt, 3072), {WholeGpus(2), Cores(4), MemoryMiB(0)}),
            MemoryMiB(4 * 3072));
}

TEST(DefaultMemory, ThePerCpuDefaultIsNamedWhenItIsTheOneThatApplies) {
  const DefaultMemory both = Defaults(24576, 3072);
  EXPECT_EQ(PerCpuDefaultFor(both, {MilliGpu(0), Cores(2), MemoryMiB(0)}), MemoryMiB(3072));
  EXPECT_EQ(PerCpuDefaultFor(both, {WholeGpus(1), Cores(2), MemoryMiB(0)}), std::nullopt);
  EXPECT_EQ(PerCpuDefaultFor(Defaults(std::nullopt, 3072), {WholeGpus(1), Cores(2), MemoryMiB(0)}),
            MemoryMiB(3072));
}

TEST(DefaultMemory, WithoutAPerCpuDefaultACpuTaskGetsNone) {
  EXPECT_EQ(DefaultTaskMemory(Defaults(24576, std::nullopt), {MilliGpu(0), Cores(4), MemoryMiB(0)}),
            MemoryMiB(0));
}

TEST(DefaultMemory, TheNearestQueueOnThePathThatSetsAnyDecides) {
  Result<QuotaTree> tree = QuotaTree::Make({Queue("root", "", Defaults(std::nullopt, 1000)),
                                            Queue("team", "root", Defaults(20000, std::nullopt)),
                                            Queue("inherits", "root", DefaultMemory{}),
                                            Queue("plain", "", DefaultMemory{})});
  ASSERT_TRUE(tree.ok()) << tree.status().message();
  const DefaultMemory* team = QueueDefaultMemory(*tree, *tree->Find("team"));
  ASSERT_NE(team, nullptr);
  // team's defaults replace root's: no per-CPU default there.
  EXPECT_EQ(*team, Defaults(20000, std::nullopt));
  const DefaultMemory* inherits = QueueDefaultMemory(*tree, *tree->Find("inherits"));
  ASSERT_NE(inherits, nullptr);
  EXPECT_EQ(*inherits, Defaults(std::nullopt, 1000));
  EXPECT_EQ(QueueDefaultMemory(*tree, *tree->Find("plain")), nullptr);
}

TEST(DefaultMemory, TheTreeRefusesADefaultBelowOneMiB) {
  Result<QuotaTree> tree = QuotaTree::Make({Queue("q", "", Defaults(0, std::nullopt))});
  ASSERT_FALSE(tree.ok());
  EXPECT_THAT(tree.status().message(), HasSubstr("queues.q.default_memory_per_gpu_mib"));
}

}  // namespace
}  // namespace berth::core
