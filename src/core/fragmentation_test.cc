#include "core/fragmentation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/capacity.h"
#include "core/node_table.h"
#include "core/placer.h"
#include "core/test_builders.h"

namespace berth::core {
namespace {

using testing::N;

// A node table and its free capacity, with helpers that occupy resources
// the way running tasks would.
class Cluster {
 public:
  Cluster() = default;
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  NodeId Add(const std::string& type, int gpus, int64_t cores = 64, int64_t memory_gib = 512) {
    const NodeId id = table_.Add(MakeNodeSpec("n" + std::to_string(table_.size()), type, gpus,
                                              Cores(cores), MemoryMiB(memory_gib * 1024)));
    capacity_.SyncNodes();
    return id;
  }
  // A share of `milli` on one device.
  void UseShare(NodeId node, int gpu, int64_t milli) {
    Placement placement;
    placement.shape.gpu = MilliGpu(milli);
    placement.tasks.push_back(TaskPlacement{node, GpuMask{1} << gpu});
    capacity_.Allocate(placement);
  }
  // Whole devices [0, count).
  void UseWhole(NodeId node, int count) {
    Placement placement;
    placement.shape.gpu = WholeGpus(count);
    placement.tasks.push_back(TaskPlacement{node, (GpuMask{1} << count) - 1});
    capacity_.Allocate(placement);
  }
  void UseCpu(NodeId node, int64_t cores) {
    Placement placement;
    placement.shape.cpu = Cores(cores);
    placement.tasks.push_back(TaskPlacement{node, 0});
    capacity_.Allocate(placement);
  }
  GpuTypeId Type(const std::string& name) const { return *table_.FindType(name); }
  const Capacity& capacity() const { return capacity_; }
  Capacity& mutable_capacity() { return capacity_; }

 private:
  NodeTable table_;  // before capacity_, which points at it
  Capacity capacity_{&table_};
};

TaskShape Shape(int64_t gpu_milli, int64_t cores = 0) {
  TaskShape shape;
  shape.gpu = MilliGpu(gpu_milli);
  shape.cpu = Cores(cores);
  return shape;
}

WorkloadShape Weighted(int64_t gpu_milli, int64_t weight, int64_t cores = 0) {
  return WorkloadShape{Shape(gpu_milli, cores), std::nullopt, weight};
}

PlacementRequest Task(int64_t gpu_milli, int64_t cores = 0) {
  PlacementRequest request;
  request.shape = Shape(gpu_milli, cores);
  return request;
}

std::optional<Placement> PlaceFgd(const Cluster& cluster, const PlacementRequest& request,
                                  const FragmentationModel& model) {
  PlaceOptions options;
  options.fragmentation = &model;
  return Place(cluster.capacity(), request, options);
}

// --- the measure -------------------------------------------------------------

TEST(FragmentationModelTest, NodeFragmentationByHand) {
  Cluster cluster;
  const NodeId node = cluster.Add("V100", 2);
  cluster.UseShare(node, 0, 700);  // free: 300 and 1000
  const FragmentationModel model(
      {Weighted(1000, 3), Weighted(500, 1), Weighted(0, 2), Weighted(2000, 1)});
  EXPECT_EQ(model.total_weight(), 7);
  // CPU-only: all 1300 free; 0.5 share: the 300 device; 1 GPU: the 300
  // device; 2 GPUs: cannot run (one whole device), so all 1300.
  EXPECT_EQ(model.NodeFragmentation(cluster.capacity(), node),
            2 * 1300 + 1 * 300 + 3 * 300 + 1 * 1300);
}

TEST(FragmentationModelTest, ShapesThatCannotRunCountEverythingFree) {
  Cluster cluster;
  const NodeId v100 = cluster.Add("V100", 8);
  const NodeId small = cluster.Add("A100", 2, /*cores=*/4);
  const GpuTypeId a100 = cluster.Type("A100");
  // Wrong model: the V100 node's 8 free GPUs are all fragments to it.
  const FragmentationModel by_model({WorkloadShape{Shape(1000), a100, 5}});
  EXPECT_EQ(by_model.NodeFragmentation(cluster.capacity(), v100), 5 * 8000);
  EXPECT_EQ(by_model.NodeFragmentation(cluster.capacity(), small), 0);
  // Too little CPU: the 2-GPU node cannot host an 8-core 1-GPU task.
  const FragmentationModel by_cpu({Weighted(1000, 2, /*cores=*/8)});
  EXPECT_EQ(by_cpu.NodeFragmentation(cluster.capacity(), small), 2 * 2000);
  EXPECT_EQ(by_cpu.NodeFragmentation(cluster.capacity(), v100), 0);
  EXPECT_EQ(by_cpu.ClusterFragmentation(cluster.capacity()), 2 * 2000);
}

TEST(FragmentationModelTest, FullAndUnschedulableNodesHaveNoFragmentation) {
  Cluster cluster;
  const NodeId full = cluster.Add("V100", 2);
  const NodeId drained = cluster.Add("V100", 2);
  cluster.UseWhole(full, 2);
  cluster.mutable_capacity().SetNodeState(drained, NodeState::kDraining);
  const FragmentationModel model({Weighted(1000, 1), Weighted(0, 1)});
  EXPECT_EQ(model.NodeFragmentation(cluster.capacity(), full), 0);
  EXPECT_EQ(model.NodeFragmentation(cluster.capacity(), drained), 0);
  EXPECT_FALSE(PlaceFgd(cluster, Task(1000), model));
}

TEST(FragmentationModelTest, WorkloadOrderAndSplitDoNotMatter) {
  Cluster cluster;
  const NodeId node = cluster.Add("V100", 4, /*cores=*/16);
  cluster.UseShare(node, 1, 250);
  cluster.UseCpu(node, 10);
  std::vector<WorkloadShape> workload = {Weighted(1000, 4, 8), Weighted(250, 2, 2),
                                         Weighted(750, 1, 4), Weighted(0, 3, 12)};
  const int64_t expected = FragmentationModel(workload).NodeFragmentation(cluster.capacity(), node);
  std::reverse(workload.begin(), workload.end());
  workload.push_back(Weighted(1000, 0));  // a zero weight plays no part
  workload[0].weight = 1;                 // CPU-only 12 cores: 1 + 2 = 3
  workload.push_back(Weighted(0, 2, 12));
  EXPECT_EQ(FragmentationModel(workload).NodeFragmentation(cluster.capacity(), node), expected);
}

// --- the rule: scenarios with a known right answer --------------------------

TEST(FragmentationPlacementTest, HalfGpuJoinsTheHalfUsedGpuWhenWholeGpuTasksAreCommon) {
  Cluster cluster;
  const NodeId node = cluster.Add("V100", 2);
  cluster.Add("V100", 1);
  cluster.UseShare(node, 1, 500);
  const FragmentationModel model({Weighted(1000, 10), Weighted(500, 1)});
  std::optional<Placement> placement = PlaceFgd(cluster, Task(500), model);
  ASSERT_TRUE(placement);
  EXPECT_EQ(placement->tasks[0], (TaskPlacement{node, GpuMask{0b10}}));
}

TEST(FragmentationPlacementTest, ShareLeavesARemainderTheWorkloadCanStillUse) {
  Cluster cluster;
  const NodeId tight = cluster.Add("V100", 1);
  const NodeId roomy = cluster.Add("V100", 1);
  cluster.UseShare(tight, 0, 600);  // 400 free: exactly one common task
  cluster.UseShare(roomy, 0, 300);  // 700 free
  const FragmentationModel model({Weighted(400, 10)});
  // Best fit takes the tightest device and leaves 100 that no 0.4 task can
  // use; FGD puts the 0.3 task on the roomy device, leaving 400 and 400.
  std::optional<Placement> best_fit = Place(cluster.capacity(), Task(300));
  ASSERT_TRUE(best_fit);
  EXPECT_EQ(best_fit->tasks[0].node, tight);
  std::optional<Placement> fgd = PlaceFgd(cluster, Task(300), model);
  ASSERT_TRUE(fgd);
  EXPECT_EQ(fgd->tasks[0], (TaskPlacement{roomy, GpuMask{1}}));
}

TEST(FragmentationPlacementTest, OneGpuTaskSparesTheOnlyNodeEightGpuTasksCanUse) {
  Cluster cluster;
  const NodeId a100 = cluster.Add("A100", 8);
  const NodeId v100 = cluster.Add("V100", 8);
  const FragmentationModel model(
      {WorkloadShape{Shape(8000), cluster.Type("A100"), 5}, Weighted(1000, 5)});
  // Best fit sees two idle 8-GPU nodes and takes the lowest id.
  std::optional<Placement> best_fit = Place(cluster.capacity(), Task(1000));
  ASSERT_TRUE(best_fit);
  EXPECT_EQ(best_fit->tasks[0].node, a100);
  std::optional<Placement> fgd = PlaceFgd(cluster, Task(1000), model);
  ASSERT_TRUE(fgd);
  EXPECT_EQ(fgd->tasks[0].node, v100);
  EXPECT_EQ(CountGpus(fgd->tasks[0].gpus), 1);
}

TEST(FragmentationPlacementTest, OneGpuTaskDoesNotBreakTheLastIdleEightGpuNode) {
  Cluster cluster;
  const NodeId idle = cluster.Add("V100", 8);
  const NodeId big = cluster.Add("V100", 16);
  cluster.UseWhole(big, 7);  // 9 free
  const FragmentationModel model({Weighted(8000, 5), Weighted(1000, 5)});
  // Best fit takes the node with fewer free GPUs (8 < 9): afterwards no node
  // has 8 free. FGD takes one of the 9, and both nodes still hold an 8.
  std::optional<Placement> best_fit = Place(cluster.capacity(), Task(1000));
  ASSERT_TRUE(best_fit);
  EXPECT_EQ(best_fit->tasks[0].node, idle);
  std::optional<Placement> fgd = PlaceFgd(cluster, Task(1000), model);
  ASSERT_TRUE(fgd);
  EXPECT_EQ(fgd->tasks[0].node, big);
  cluster.mutable_capacity().Allocate(*fgd);
  EXPECT_EQ(cluster.capacity().free_gpu_count(idle), 8);
  EXPECT_EQ(cluster.capacity().free_gpu_count(big), 8);
}

TEST(FragmentationPlacementTest, CpuOnlyTaskAvoidsStarvingAGpuNodeOfCpu) {
  Cluster cluster;
  const NodeId gpus_free = cluster.Add("V100", 2, /*cores=*/8);
  const NodeId gpus_busy = cluster.Add("V100", 2, /*cores=*/16);
  cluster.UseWhole(gpus_busy, 2);
  const FragmentationModel model({Weighted(1000, 10, 4), Weighted(0, 1, 6)});
  // Best fit takes the node with the least CPU left (8 - 6 < 16 - 6), which
  // leaves its two GPUs without the 4 cores a GPU task needs.
  std::optional<Placement> best_fit = Place(cluster.capacity(), Task(0, 6));
  ASSERT_TRUE(best_fit);
  EXPECT_EQ(best_fit->tasks[0].node, gpus_free);
  std::optional<Placement> fgd = PlaceFgd(cluster, Task(0, 6), model);
  ASSERT_TRUE(fgd);
  EXPECT_EQ(fgd->tasks[0], (TaskPlacement{gpus_busy, 0}));
}

TEST(FragmentationPlacementTest, TiesFollowBestFitThenLowestIds) {
  Cluster cluster;
  for (int i = 0; i < 4; ++i) cluster.Add("V100", 8);
  cluster.UseWhole(N(0), 2);  // 6 free
  cluster.UseWhole(N(1), 5);  // 3 free
  cluster.UseWhole(N(2), 5);  // 3 free
  cluster.UseShare(N(3), 4, 500);
  cluster.UseShare(N(3), 6, 500);
  // A workload of CPU-only tasks moves F by the same amount wherever a GPU
  // task goes, so every choice ties and the best-fit rule decides.
  const FragmentationModel model({Weighted(0, 1)});
  for (const int64_t milli : {1000, 2000, 3000, 500, 300}) {
    SCOPED_TRACE(milli);
    std::optional<Placement> best_fit = Place(cluster.capacity(), Task(milli));
    std::optional<Placement> fgd = PlaceFgd(cluster, Task(milli), model);
    ASSERT_TRUE(best_fit && fgd);
    EXPECT_EQ(*fgd, *best_fit);
  }
  std::optional<Placement> half = PlaceFgd(cluster, Task(500), model);
  ASSERT_TRUE(half);
  EXPECT_EQ(half->tasks[0], (TaskPlacement{N(3), GpuMask{1} << 4}));
}

TEST(FragmentationPlacementTest, GangsKeepTheBestFitGangRule) {
  Cluster cluster;
  for (int i = 0; i < 3; ++i) cluster.Add("V100", 8);
  cluster.UseWhole(N(2), 4);
  const FragmentationModel model({Weighted(4000, 1)});
  PlacementRequest gang = Task(4000);
  gang.tasks = 3;
  std::optional<Placement> best_fit = Place(cluster.capacity(), gang);
  std::optional<Placement> fgd = PlaceFgd(cluster, gang, model);
  ASSERT_TRUE(best_fit && fgd);
  EXPECT_EQ(*fgd, *best_fit);
}

TEST(FragmentationPlacementTest, RespectsTheRequestedModel) {
  Cluster cluster;
  cluster.Add("V100", 8);
  const NodeId t4 = cluster.Add("T4", 2);
  const FragmentationModel model({Weighted(8000, 10)});
  PlacementRequest request = Task(1000);
  request.type = cluster.Type("T4");
  std::optional<Placement> fgd = PlaceFgd(cluster, request, model);
  ASSERT_TRUE(fgd);
  EXPECT_EQ(fgd->tasks[0].node, t4);
  request.shape.gpu = WholeGpus(4);
  EXPECT_FALSE(PlaceFgd(cluster, request, model));
}

// Whether a request fits never depends on the rule, and the rule's answer is
// always allocatable: random states, fixed seed.
TEST(FragmentationPlacementTest, FitsExactlyWhenBestFitFitsAndAlwaysAllocatable) {
  uint64_t seed = 12345;
  auto next = [&seed](uint64_t bound) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (seed >> 33) % bound;
  };
  const int64_t kShares[] = {0, 250, 500, 1000, 2000, 4000, 8000};
  const FragmentationModel model({Weighted(1000, 20, 4), Weighted(500, 10, 2), Weighted(250, 5, 1),
                                  Weighted(8000, 3, 32), Weighted(0, 4, 8)});
  for (int round = 0; round < 20; ++round) {
    Cluster cluster;
    for (int n = 0; n < 6; ++n) {
      // Separate statements: argument evaluation order is unspecified.
      const std::string type = next(2) == 0 ? "V100" : "T4";
      const int gpus = next(2) == 0 ? 8 : 2;
      cluster.Add(type, gpus, 16 + 16 * static_cast<int64_t>(next(3)));
    }
    for (int step = 0; step < 400; ++step) {
      const int64_t milli = kShares[next(7)];
      const PlacementRequest request = Task(milli, static_cast<int64_t>(next(10)));
      const std::optional<Placement> best_fit = Place(cluster.capacity(), request);
      const std::optional<Placement> fgd = PlaceFgd(cluster, request, model);
      ASSERT_EQ(best_fit.has_value(), fgd.has_value()) << "round " << round << " step " << step;
      if (!fgd) continue;
      ASSERT_TRUE(cluster.capacity().CanAllocate(*fgd));
      cluster.mutable_capacity().Allocate(*fgd);
    }
  }
}

TEST(FragmentationPlacementTest, BucketsChooseAsTheFullScanOnAlikeNodes) {
  // Whole-GPU tasks on nodes that differ only in what they run (two models,
  // same CPU and memory, no shares): one node per (model, free GPUs) bucket
  // stands for all, so the bucketed rule must pick the node the full scan
  // picks, through a run of random placements and departures.
  uint64_t seed = 777;
  auto next = [&seed](uint64_t bound) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (seed >> 33) % bound;
  };
  const FragmentationModel model(
      {Weighted(1000, 30), Weighted(2000, 10), Weighted(4000, 6), Weighted(8000, 4)});
  Cluster cluster;
  for (int n = 0; n < 24; ++n) cluster.Add(n % 3 == 0 ? "T4" : "V100", 8);
  const int kWhole[] = {1, 1, 1, 2, 4, 8};
  std::vector<Placement> running;
  for (int step = 0; step < 2000; ++step) {
    if (!running.empty() && next(3) == 0) {
      const size_t gone = next(running.size());
      cluster.mutable_capacity().Release(running[gone]);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(gone));
      continue;
    }
    PlacementRequest request = Task(1000 * kWhole[next(6)]);
    if (next(4) == 0) request.type = cluster.Type("T4");
    const std::optional<FragmentationChoice> scan =
        ChooseByFragmentation(cluster.capacity(), request, model);
    const std::optional<FragmentationChoice> bucket =
        ChooseWholeGpusByBucket(cluster.capacity(), request, model);
    ASSERT_EQ(scan.has_value(), bucket.has_value()) << "step " << step;
    if (!scan) continue;
    ASSERT_EQ(scan->node, bucket->node) << "step " << step;
    PlaceOptions options;
    options.fragmentation = &model;
    options.whole_gpus_by_bucket = true;
    std::optional<Placement> placed = Place(cluster.capacity(), request, options);
    ASSERT_TRUE(placed.has_value());
    EXPECT_EQ(placed->tasks[0].node, bucket->node);
    cluster.mutable_capacity().Allocate(*placed);
    running.push_back(*placed);
  }
}

}  // namespace
}  // namespace berth::core
