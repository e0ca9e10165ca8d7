#include "core/placer.h"

#include <gtest/gtest.h>

#include "core/cluster_state.h"
#include "core/test_builders.h"

namespace berth::core {
namespace {

using testing::AddNodes;
using testing::At;
using testing::Id;
using testing::N;
using testing::NewJob;
using testing::Occupy;

PlacementRequest Request(int tasks, int gpus_per_task) {
  PlacementRequest request;
  request.tasks = tasks;
  request.shape.gpu = WholeGpus(gpus_per_task);
  return request;
}

// Why the request does not fit now, as an explaining cycle concludes it.
ReasonCode Diagnose(const Capacity& capacity, const PlacementRequest& request) {
  return BlockedReason(TallyNow(capacity, request), request);
}

TEST(PlacerTest, SingleTaskGoesToTheFullestNodeThatFits) {
  ClusterState state;
  AddNodes(state, 3, 8);
  Occupy(state, 100, N(0), 2);  // 6 free
  Occupy(state, 101, N(1), 5);  // 3 free
  // n2 idle: 8 free.
  std::optional<Placement> placement = Place(state.capacity(), Request(1, 2));
  ASSERT_TRUE(placement);
  ASSERT_EQ(placement->tasks.size(), 1u);
  EXPECT_EQ(placement->tasks[0].node, N(1));
  EXPECT_EQ(CountGpus(placement->tasks[0].gpus), 2);
}

TEST(PlacerTest, TiesGoToTheLowestNodeId) {
  ClusterState state;
  AddNodes(state, 3, 8);
  Occupy(state, 100, N(1), 4);
  Occupy(state, 101, N(2), 4);
  std::optional<Placement> placement = Place(state.capacity(), Request(1, 4));
  ASSERT_TRUE(placement);
  EXPECT_EQ(placement->tasks[0].node, N(1));
}

TEST(PlacerTest, WholeNodeGangTakesIdleNodesLowestFirst) {
  ClusterState state;
  AddNodes(state, 4, 8);
  Occupy(state, 100, N(0), 1);
  std::optional<Placement> placement = Place(state.capacity(), Request(2, 8));
  ASSERT_TRUE(placement);
  EXPECT_EQ(placement->Nodes(), (std::vector<NodeId>{N(1), N(2)}));
  for (const TaskPlacement& task : placement->tasks) EXPECT_EQ(CountGpus(task.gpus), 8);
}

TEST(PlacerTest, GangThatFitsOneNodeStaysOnOneNode) {
  ClusterState state;
  AddNodes(state, 2, 8);
  std::optional<Placement> placement = Place(state.capacity(), Request(4, 2));
  ASSERT_TRUE(placement);
  EXPECT_EQ(placement->Nodes(), (std::vector<NodeId>{N(0)}));
  GpuMask all = 0;
  for (const TaskPlacement& task : placement->tasks) {
    EXPECT_EQ(all & task.gpus, 0u) << "two tasks share a GPU";
    all |= task.gpus;
  }
  EXPECT_EQ(CountGpus(all), 8);
}

TEST(PlacerTest, GangUsesFewestNodesAndBestFitsTheRemainder) {
  ClusterState state;
  AddNodes(state, 3, 8);
  Occupy(state, 100, N(2), 4);  // n2: 4 free, n0/n1 idle
  // 3 tasks x 4 GPUs: n0 holds two, the third best-fits on n2, not idle n1.
  std::optional<Placement> placement = Place(state.capacity(), Request(3, 4));
  ASSERT_TRUE(placement);
  ASSERT_EQ(placement->tasks.size(), 3u);
  EXPECT_EQ(placement->tasks[0].node, N(0));
  EXPECT_EQ(placement->tasks[1].node, N(0));
  EXPECT_EQ(placement->tasks[2].node, N(2));
}

TEST(PlacerTest, GangIsAllOrNothing) {
  ClusterState state;
  AddNodes(state, 2, 8);
  Occupy(state, 100, N(0), 4);
  Occupy(state, 101, N(1), 4);
  // 8 free GPUs in total, but no node has 8.
  EXPECT_FALSE(Place(state.capacity(), Request(1, 8)));
  EXPECT_FALSE(Place(state.capacity(), Request(2, 8)));
  EXPECT_EQ(Diagnose(state.capacity(), Request(1, 8)), ReasonCode::kFragmentation);
  EXPECT_EQ(Diagnose(state.capacity(), Request(2, 8)), ReasonCode::kResources);
}

TEST(PlacerTest, RespectsGpuModel) {
  ClusterState state;
  AddNodes(state, 1, 8, "V100");
  AddNodes(state, 1, 8, "A100");
  const ResolvedRequest resolved_resolved =
      ResolveRequest(state.nodes(), NewJob(1).Gpus(2).Type("A100"));
  const PlacementRequest& resolved = resolved_resolved.request;
  std::optional<Placement> placement = Place(state.capacity(), resolved);
  ASSERT_TRUE(placement);
  EXPECT_EQ(placement->tasks[0].node, N(1));

  // A model no node has: every node is rejected by the model filter.
  const ResolvedRequest unknown_resolved = ResolveRequest(state.nodes(), NewJob(2).Type("H100"));
  const PlacementRequest& unknown = unknown_resolved.request;
  EXPECT_FALSE(FitsEmptyCluster(state.nodes(), unknown));
  EXPECT_EQ(TallyEver(state.nodes(), unknown).rejected_by(NodeRejection::kGpuModel), 2);
}

TEST(PlacerTest, KeepsATaskInsideOneInterconnectGroup) {
  ClusterState state;
  NodeSpec spec = MakeNodeSpec("n0", "H100", 8);
  for (int i = 4; i < 8; ++i) spec.gpus[static_cast<size_t>(i)].interconnect_group = 1;
  state.AddNode(spec);
  Occupy(state, 100, N(0), 2);  // GPUs 0,1 of group 0 busy: group 0 has 2 free, group 1 has 4

  // Two GPUs: the fullest group that fits (group 0: GPUs 2,3).
  std::optional<Placement> two = Place(state.capacity(), Request(1, 2));
  ASSERT_TRUE(two);
  EXPECT_EQ(two->tasks[0].gpus, GpuMask{0b00001100});
  // Three GPUs: only group 1 has room.
  std::optional<Placement> three = Place(state.capacity(), Request(1, 3));
  ASSERT_TRUE(three);
  EXPECT_EQ(three->tasks[0].gpus, GpuMask{0b01110000});
  // Five GPUs must span groups: all of group 1 plus one of group 0.
  std::optional<Placement> five = Place(state.capacity(), Request(1, 5));
  ASSERT_TRUE(five);
  EXPECT_EQ(five->tasks[0].gpus, GpuMask{0b11110100});
}

TEST(PlacerTest, SkipsUnhealthyGpusAndUnschedulableNodes) {
  ClusterState state;
  AddNodes(state, 2, 8);
  state.SetGpuHealth(N(0), 0, GpuHealth::kUnhealthy);
  EXPECT_EQ(state.capacity().free_gpu_count(N(0)), 7);
  // 8 GPUs: n0 lacks one healthy GPU, so n1.
  std::optional<Placement> placement = Place(state.capacity(), Request(1, 8));
  ASSERT_TRUE(placement);
  EXPECT_EQ(placement->tasks[0].node, N(1));

  state.SetNodeState(N(1), NodeState::kDraining);
  EXPECT_FALSE(Place(state.capacity(), Request(1, 8)));
  state.SetNodeState(N(0), NodeState::kDown);
  EXPECT_EQ(Diagnose(state.capacity(), Request(1, 1)), ReasonCode::kNodesUnavailable);
}

TEST(PlacerTest, ChecksCpuAndMemoryPerNode) {
  ClusterState state;
  state.AddNode(MakeNodeSpec("small", "V100", 8, Cores(8), MemoryMiB(1024)));
  state.AddNode(MakeNodeSpec("big", "V100", 8, Cores(64), MemoryMiB(65536)));
  PlacementRequest request = Request(1, 1);
  request.shape.memory = MemoryMiB(2048);
  std::optional<Placement> placement = Place(state.capacity(), request);
  ASSERT_TRUE(placement);
  EXPECT_EQ(placement->tasks[0].node, N(1));
}

TEST(PlacerTest, GpuShareGoesToTheTightestDevice) {
  ClusterState state;
  AddNodes(state, 1, 2);
  JobSpec half = NewJob(100).GpuMilli(500);
  state.Submit(half, At(0));
  Placement placement;
  placement.shape = half.task;
  placement.tasks.push_back(TaskPlacement{N(0), GpuMask{0b10}});
  state.Start(half.id, placement, At(0));

  PlacementRequest request;
  request.shape.gpu = MilliGpu(300);
  std::optional<Placement> share = Place(state.capacity(), request);
  ASSERT_TRUE(share);
  EXPECT_EQ(share->tasks[0].gpus, GpuMask{0b10});  // GPU 1 has 500 left: tighter than GPU 0

  request.shape.gpu = MilliGpu(600);
  share = Place(state.capacity(), request);
  ASSERT_TRUE(share);
  EXPECT_EQ(share->tasks[0].gpus, GpuMask{0b01});
}

TEST(PlacerTest, FeasibilityIsAgainstTheEmptyCluster) {
  ClusterState state;
  AddNodes(state, 2, 8);
  Occupy(state, 100, N(0), 8);
  EXPECT_TRUE(FitsEmptyCluster(state.nodes(), Request(2, 8)));
  EXPECT_FALSE(FitsEmptyCluster(state.nodes(), Request(3, 8)));
  EXPECT_FALSE(FitsEmptyCluster(state.nodes(), Request(1, 16)));
}

TEST(PlacerTest, AGangFitsTheEmptyClusterOnlyOnNodesOfOneModel) {
  ClusterState state;
  AddNodes(state, 2, 8, "V100");
  AddNodes(state, 1, 8, "A100");
  EXPECT_TRUE(FitsEmptyCluster(state.nodes(), Request(2, 8)));
  EXPECT_FALSE(FitsEmptyCluster(state.nodes(), Request(3, 8))) << "three nodes, but of two models";
  EXPECT_TRUE(FitsEmptyCluster(state.nodes(), Request(4, 4)));
  EXPECT_FALSE(FitsEmptyCluster(state.nodes(), Request(5, 4)));
}

// Issue 29: a Slurm job is one task per node on distinct nodes; --nodes 2
// gave one node when both shares fit it.
PlacementRequest Distinct(PlacementRequest request) {
  request.spread = NodeSpread::kDistinctNodes;
  return request;
}

TEST(PlacerTest, ADistinctNodesGangTakesOneNodePerTaskEvenWhenOneWouldHoldIt) {
  ClusterState state;
  AddNodes(state, 3, 8);
  std::optional<Placement> placement = Place(state.capacity(), Distinct(Request(2, 4)));
  ASSERT_TRUE(placement);
  ASSERT_EQ(placement->tasks.size(), 2u);
  EXPECT_NE(placement->tasks[0].node, placement->tasks[1].node);
  for (const TaskPlacement& task : placement->tasks) EXPECT_EQ(CountGpus(task.gpus), 4);
  // Without the rule the same gang shares one node.
  EXPECT_EQ(Place(state.capacity(), Request(2, 4))->Nodes().size(), 1u);
}

TEST(PlacerTest, ADistinctNodesGangOfCpuOnlyTasksSpreadsToo) {
  ClusterState state;
  AddNodes(state, 3, 8);
  PlacementRequest request = Distinct(Request(3, 0));
  request.shape.cpu = Cores(1);
  std::optional<Placement> placement = Place(state.capacity(), request);
  ASSERT_TRUE(placement);
  EXPECT_EQ(placement->Nodes(), (std::vector<NodeId>{N(0), N(1), N(2)}));
}

TEST(PlacerTest, ADistinctNodesGangWaitsForEnoughNodesWithRoom) {
  ClusterState state;
  AddNodes(state, 3, 8);
  Occupy(state, 100, N(0), 8);
  Occupy(state, 101, N(1), 8);
  // 8 free GPUs on n2 would hold two tasks of 1 GPU, but not on two nodes.
  EXPECT_FALSE(Place(state.capacity(), Distinct(Request(2, 1))));
  EXPECT_TRUE(Place(state.capacity(), Request(2, 1)));
  EXPECT_EQ(Diagnose(state.capacity(), Distinct(Request(2, 1))), ReasonCode::kResources);
  EXPECT_EQ(BlockedReason(state.capacity(), Distinct(Request(2, 1))), ReasonCode::kResources);
  EXPECT_EQ(TallyNow(state.capacity(), Distinct(Request(2, 1))).tasks, 1);
  EXPECT_TRUE(FitsEmptyCluster(state.nodes(), Distinct(Request(3, 1))));
}

TEST(PlacerTest, ADistinctNodesGangLargerThanTheClusterIsInfeasible) {
  ClusterState state;
  AddNodes(state, 2, 8);
  EXPECT_FALSE(FitsEmptyCluster(state.nodes(), Distinct(Request(3, 1))));
  EXPECT_TRUE(FitsEmptyCluster(state.nodes(), Request(3, 1)));
  const PlacementOutcome outcome = PlaceOrExplain(state.capacity(), Distinct(Request(3, 1)));
  ASSERT_TRUE(std::holds_alternative<Infeasible>(outcome));
  EXPECT_EQ(std::get<Infeasible>(outcome).nodes.fit, 2);
  EXPECT_EQ(std::get<Infeasible>(outcome).nodes.tasks, 2);
}

// A gang on distinct nodes whose tasks have these whole GPUs each.
PlacementRequest Uneven(const std::vector<int>& gpus) {
  std::vector<TaskShape> shapes;
  for (int count : gpus) shapes.push_back(TaskShape{WholeGpus(count), Cores(0), MemoryMiB(0)});
  PlacementRequest request;
  request.tasks = static_cast<int32_t>(shapes.size());
  request.shape = LargestShape(shapes);
  request.spread = NodeSpread::kDistinctNodes;
  request.task_shapes = std::make_shared<const std::vector<TaskShape>>(std::move(shapes));
  return request;
}

TEST(PlacerTest, AnUnevenGangGivesEachTaskItsOwnShapeOnANodeOfItsOwn) {
  ClusterState state;
  AddNodes(state, 2, 8);
  // Slurm's -N 2 --gpus=6: 5 GPUs on one node, 1 on the other.
  std::optional<Placement> placement = Place(state.capacity(), Uneven({5, 1}));
  ASSERT_TRUE(placement);
  ASSERT_EQ(placement->tasks.size(), 2u);
  EXPECT_NE(placement->tasks[0].node, placement->tasks[1].node);
  EXPECT_EQ(CountGpus(placement->tasks[0].gpus), 5);
  EXPECT_EQ(CountGpus(placement->tasks[1].gpus), 1);
  EXPECT_EQ(placement->ShapeOf(0).gpu, WholeGpus(5));
  EXPECT_EQ(placement->ShapeOf(1).gpu, WholeGpus(1));
  EXPECT_EQ(placement->TotalGpu(), WholeGpus(6));
  ASSERT_TRUE(state.capacity().CanAllocate(*placement));
}

TEST(PlacerTest, AnUnevenGangPlacesItsLargestTaskFirstByBestFit) {
  ClusterState state;
  AddNodes(state, 3, 8);
  Occupy(state, 100, N(1), 2);  // 6 free
  Occupy(state, 101, N(2), 6);  // 2 free; n0 idle
  // Rank 0 is the small task: it still goes where it fits best once the
  // large one has taken the tightest node that holds it.
  std::optional<Placement> placement = Place(state.capacity(), Uneven({1, 5}));
  ASSERT_TRUE(placement);
  EXPECT_EQ(placement->tasks[1].node, N(1));
  EXPECT_EQ(placement->tasks[0].node, N(2));
}

TEST(PlacerTest, AnUnevenGangWaitsForANodeThatHoldsItsLargestTask) {
  ClusterState state;
  AddNodes(state, 2, 8);
  Occupy(state, 100, N(0), 4);
  Occupy(state, 101, N(1), 4);
  // 8 GPUs free in all, 4 per node: 3 + 3 would fit, 5 + 1 does not.
  EXPECT_FALSE(Place(state.capacity(), Uneven({5, 1})));
  EXPECT_TRUE(Place(state.capacity(), Distinct(Request(2, 3))));
  EXPECT_TRUE(FitsEmptyCluster(state.nodes(), Uneven({5, 1})));
  EXPECT_EQ(Diagnose(state.capacity(), Uneven({5, 1})), ReasonCode::kResources);
}

TEST(PlacerTest, AnUnevenGangFitsTheEmptyClusterOnlyWhenEachTaskHasANode) {
  ClusterState state;
  AddNodes(state, 1, 8, "V100", "big");
  AddNodes(state, 1, 4, "V100", "small");
  EXPECT_TRUE(FitsEmptyCluster(state.nodes(), Uneven({8, 4})));
  EXPECT_TRUE(FitsEmptyCluster(state.nodes(), Uneven({3, 6})));
  // Two tasks of 5 need two nodes of 8: the small node holds neither.
  EXPECT_FALSE(FitsEmptyCluster(state.nodes(), Uneven({5, 5})));
  EXPECT_FALSE(FitsEmptyCluster(state.nodes(), Uneven({1, 1, 1})));
  const PlacementOutcome outcome = PlaceOrExplain(state.capacity(), Uneven({5, 5}));
  EXPECT_TRUE(std::holds_alternative<Infeasible>(outcome));
}

}  // namespace
}  // namespace berth::core
