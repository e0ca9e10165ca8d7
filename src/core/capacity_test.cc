#include "core/capacity.h"

#include <gtest/gtest.h>

#include "core/node_table.h"

namespace berth::core {
namespace {

Placement Whole(NodeId node, GpuMask gpus, int per_task) {
  Placement placement;
  placement.shape.gpu = WholeGpus(per_task);
  placement.tasks.push_back(TaskPlacement{node, gpus});
  return placement;
}

std::vector<NodeId> NodesWithFree(const Capacity& capacity, int free) {
  std::vector<NodeId> nodes;
  capacity.ForEachWithFree(GpuTypeId{0}, free, [&](NodeId node) {
    nodes.push_back(node);
    return false;
  });
  return nodes;
}

class CapacityTest : public ::testing::Test {
 protected:
  CapacityTest() {
    for (int i = 0; i < 3; ++i) {
      table_.Add(MakeNodeSpec("n" + std::to_string(i), "V100", 8, Cores(16), MemoryMiB(1000)));
    }
    capacity_.SyncNodes();
  }
  NodeTable table_;
  Capacity capacity_{&table_};
};

TEST_F(CapacityTest, IndexTracksFreeCountsThroughAllocateAndRelease) {
  EXPECT_EQ(NodesWithFree(capacity_, 8), (std::vector<NodeId>{NodeId{0}, NodeId{1}, NodeId{2}}));
  const Placement three = Whole(NodeId{1}, 0b111, 3);
  ASSERT_TRUE(capacity_.CanAllocate(three));
  capacity_.Allocate(three);
  EXPECT_EQ(NodesWithFree(capacity_, 8), (std::vector<NodeId>{NodeId{0}, NodeId{2}}));
  EXPECT_EQ(NodesWithFree(capacity_, 5), (std::vector<NodeId>{NodeId{1}}));
  EXPECT_EQ(capacity_.free_gpus_of_type(GpuTypeId{0}), 21);
  EXPECT_FALSE(capacity_.CanAllocate(Whole(NodeId{1}, 0b100, 1))) << "GPU 2 is taken";

  capacity_.Release(three);
  EXPECT_EQ(NodesWithFree(capacity_, 8).size(), 3u);
  EXPECT_EQ(capacity_.free_gpus_of_type(GpuTypeId{0}), 24);
}

TEST_F(CapacityTest, CopiesAreIndependentOverlays) {
  Capacity overlay = capacity_;
  overlay.Allocate(Whole(NodeId{0}, 0xff, 8));
  EXPECT_EQ(overlay.free_gpu_count(NodeId{0}), 0);
  EXPECT_EQ(capacity_.free_gpu_count(NodeId{0}), 8);
}

TEST_F(CapacityTest, ReserveHidesDevicesWhetherOrNotTheyAreFree) {
  capacity_.Allocate(Whole(NodeId{0}, 0b0011, 2));
  capacity_.Reserve(Whole(NodeId{0}, 0b0110, 2));  // GPU 1 busy, GPU 2 free
  EXPECT_EQ(capacity_.free_gpus(NodeId{0}), GpuMask{0b11111000});
}

TEST_F(CapacityTest, UnschedulableNodesOfferNothingButKeepAllocations) {
  const Placement two = Whole(NodeId{2}, 0b11, 2);
  capacity_.Allocate(two);
  capacity_.SetNodeState(NodeId{2}, NodeState::kDraining);
  EXPECT_EQ(capacity_.free_gpu_count(NodeId{2}), 0);
  EXPECT_EQ(capacity_.schedulable_nodes_of_type(GpuTypeId{0}), 2);
  capacity_.Release(two);  // running work can still end there
  capacity_.SetNodeState(NodeId{2}, NodeState::kUp);
  EXPECT_EQ(capacity_.free_gpu_count(NodeId{2}), 8);
}

TEST_F(CapacityTest, CanAllocateChecksCpuAndMemoryAcrossTasksOnOneNode) {
  Placement placement;
  placement.shape.gpu = WholeGpus(1);
  placement.shape.memory = MemoryMiB(600);
  placement.tasks.push_back(TaskPlacement{NodeId{0}, 0b01});
  EXPECT_TRUE(capacity_.CanAllocate(placement));
  placement.tasks.push_back(TaskPlacement{NodeId{0}, 0b10});
  EXPECT_FALSE(capacity_.CanAllocate(placement)) << "1200 MiB on a 1000 MiB node";
}

TEST_F(CapacityTest, GpuSharesAddUpToOneDevice) {
  Placement share;
  share.shape.gpu = MilliGpu(400);
  share.tasks.push_back(TaskPlacement{NodeId{0}, 0b1});
  capacity_.Allocate(share);
  capacity_.Allocate(share);
  EXPECT_EQ(capacity_.free_milli(NodeId{0}, 0), 200);
  EXPECT_FALSE(capacity_.CanAllocate(share));
  EXPECT_EQ(capacity_.free_gpu_count(NodeId{0}), 7) << "a shared GPU is not free whole";
}

}  // namespace
}  // namespace berth::core
