#include "core/node_filters.h"

#include <gtest/gtest.h>

#include <bit>
#include <random>
#include <string>
#include <vector>

#include "core/cluster_state.h"
#include "core/fragmentation.h"
#include "core/placer.h"
#include "core/test_builders.h"

namespace berth::core {
namespace {

using testing::At;
using testing::N;
using testing::NewJob;
using testing::Occupy;

// A node of `gpus` GPUs of `type` with 16 cores, 64 GiB and the features.
NodeSpec Node(const std::string& name, const std::string& type, int gpus,
              std::set<std::string, std::less<>> features = {}) {
  NodeSpec spec = MakeNodeSpec(name, type, gpus, Cores(16), MemoryMiB(64 * 1024));
  spec.features = std::move(features);
  return spec;
}

NodeFit FitNow(const ClusterState& state, NodeId node, const JobSpec& job) {
  return FitOn(LiveNode(state.capacity(), node), ResolveRequest(state.nodes(), job).request);
}

TEST(NodeFiltersTest, EachFilterRejectsWithItsOwnReason) {
  ClusterState state;
  state.AddNode(Node("up", "A100", 8, {"ib"}));         // n0
  state.AddNode(Node("draining", "A100", 8, {"ib"}));   // n1
  state.AddNode(Node("down", "A100", 8, {"ib"}));       // n2
  state.AddNode(Node("other", "H100", 8, {"ib"}));      // n3
  state.AddNode(Node("no-ib", "A100", 8));              // n4
  state.AddNode(Node("busy", "A100", 8, {"ib"}));       // n5
  state.AddNode(Node("cpu-bound", "A100", 8, {"ib"}));  // n6
  state.AddNode(Node("mem-bound", "A100", 8, {"ib"}));  // n7
  state.SetNodeState(N(1), NodeState::kDraining);
  state.SetNodeState(N(2), NodeState::kDown);
  Occupy(state, 100, N(5), 7);
  Occupy(state, 101, N(6), 0, 15'000);
  Occupy(state, 102, N(7), 0, 0, 63 * 1024);
  const JobSpec job = NewJob(1).Gpus(2).Cpu(2000).Memory(2048).Type("A100").Constraint("ib");

  EXPECT_EQ(FitNow(state, N(0), job).tasks, 4) << "8 GPUs / 2, 16 cores / 2, 64 GiB / 2 GiB";
  EXPECT_EQ(FitNow(state, N(1), job).rejected, NodeRejection::kDraining);
  EXPECT_EQ(FitNow(state, N(2), job).rejected, NodeRejection::kDown);
  EXPECT_EQ(FitNow(state, N(3), job).rejected, NodeRejection::kGpuModel);
  EXPECT_EQ(FitNow(state, N(4), job).rejected, NodeRejection::kFeatures);
  EXPECT_EQ(FitNow(state, N(5), job).rejected, NodeRejection::kGpus);
  EXPECT_EQ(FitNow(state, N(6), job).rejected, NodeRejection::kCpu);
  EXPECT_EQ(FitNow(state, N(7), job).rejected, NodeRejection::kMemory);

  EXPECT_EQ(FitNow(state, N(0), NewJob(2).Gpus(1).NodeList({"busy"})).rejected,
            NodeRejection::kNodeList);
  EXPECT_EQ(FitNow(state, N(5), NewJob(2).Gpus(1).NodeList({"busy"})).tasks, 1);
  EXPECT_EQ(FitNow(state, N(0), NewJob(3).Gpus(1).Exclude({"up"})).rejected,
            NodeRejection::kExcluded);
  EXPECT_EQ(FitNow(state, N(0), NewJob(4).Gpus(1).Types({"H100", "A100"})).tasks, 8);
  EXPECT_EQ(FitNow(state, N(3), NewJob(4).Gpus(1).Types({"H100", "A100"})).tasks, 8);
  EXPECT_EQ(FitNow(state, N(0), NewJob(5).Gpus(1).Types({"V100", "H100"})).rejected,
            NodeRejection::kGpuModel);
}

// Issue 28: a job in an image goes only to nodes whose agent has a
// working container runtime, and the others are counted by that reason.
TEST(NodeFiltersTest, AJobInAnImageNeedsANodeWithAContainerRuntime) {
  ClusterState state;
  NodeSpec with_runtime = Node("podman", "A100", 8);
  with_runtime.container_runtime = "podman 4.3.1 (runc, cgroupfs, cgroup v1)";
  state.AddNode(with_runtime);             // n0
  state.AddNode(Node("bare", "A100", 8));  // n1
  const JobSpec job = NewJob(1).Gpus(2).InContainer();
  EXPECT_EQ(FitNow(state, N(0), job).tasks, 4);
  EXPECT_EQ(FitNow(state, N(1), job).rejected, NodeRejection::kContainerRuntime);
  EXPECT_EQ(FitNow(state, N(1), NewJob(2).Gpus(2)).tasks, 4) << "a host job goes anywhere";
  const NodeTally tally = TallyEver(state.nodes(), ResolveRequest(state.nodes(), job).request);
  EXPECT_EQ(tally.fit, 1);
  EXPECT_EQ(tally.rejected_by(NodeRejection::kContainerRuntime), 1);
  EXPECT_EQ(NodeRejectionName(NodeRejection::kContainerRuntime), "container_runtime");
  // An agent that registers again with a runtime makes the node eligible.
  state.SetNodeAttributes(N(1), {}, {}, "docker 24.0.7 (runc, systemd, cgroup v2)");
  EXPECT_EQ(FitNow(state, N(1), job).tasks, 4);
}

TEST(NodeFiltersTest, TheFirstFilterInOrderIsTheReason) {
  ClusterState state;
  state.AddNode(Node("n0", "H100", 4));
  Occupy(state, 100, N(0), 4);
  state.SetNodeState(N(0), NodeState::kDraining);
  // Draining, of another model, without the feature and without free GPUs:
  // the most lasting reason, the state, comes first.
  const JobSpec job = NewJob(1).Gpus(2).Type("A100").Constraint("ib");
  EXPECT_EQ(FitNow(state, N(0), job).rejected, NodeRejection::kDraining);
  state.SetNodeState(N(0), NodeState::kUp);
  EXPECT_EQ(FitNow(state, N(0), job).rejected, NodeRejection::kGpuModel);
  EXPECT_EQ(FitNow(state, N(0), NewJob(2).Gpus(2).Constraint("ib")).rejected,
            NodeRejection::kFeatures);
  EXPECT_EQ(FitNow(state, N(0), NewJob(3).Gpus(2).Cpu(100'000)).rejected, NodeRejection::kGpus);
}

TEST(NodeFiltersTest, SharesCountTheRoomOnEachDevice) {
  ClusterState state;
  state.AddNode(Node("n0", "A100", 2));
  const JobSpec quarter = NewJob(1).GpuMilli(250);
  EXPECT_EQ(FitNow(state, N(0), quarter).tasks, 8);
  Occupy(state, 100, N(0), 1);
  EXPECT_EQ(FitNow(state, N(0), quarter).tasks, 4);
  EXPECT_EQ(FitNow(state, N(0), NewJob(2).GpuMilli(600)).tasks, 1);
  Occupy(state, 101, N(0), 1);
  EXPECT_EQ(FitNow(state, N(0), quarter).rejected, NodeRejection::kGpus);
  // CPU-only tasks are limited by CPU and memory alone.
  JobSpec cpu_only = NewJob(3).Cpu(4000);
  cpu_only.task.gpu = MilliGpu(0);
  EXPECT_EQ(FitNow(state, N(0), cpu_only).tasks, 4);
}

TEST(NodeFiltersTest, TasksThatWantOneInterconnectGroupCountGroupsNotNodes) {
  ClusterState state;
  NodeSpec spec = Node("n0", "H100", 8);
  for (int i = 4; i < 8; ++i) spec.gpus[static_cast<size_t>(i)].interconnect_group = 1;
  state.AddNode(spec);
  Occupy(state, 100, N(0), 2);  // GPUs 0 and 1: group 0 has 2 free, group 1 has 4

  EXPECT_EQ(FitNow(state, N(0), NewJob(1).Gpus(4).OneGroup()).tasks, 1);
  EXPECT_EQ(FitNow(state, N(0), NewJob(2).Gpus(2).OneGroup()).tasks, 3) << "1 in group 0, 2 in 1";
  EXPECT_EQ(FitNow(state, N(0), NewJob(3).Gpus(5).OneGroup()).rejected,
            NodeRejection::kInterconnect)
      << "6 GPUs free, 4 of them in the largest group";
  EXPECT_EQ(FitNow(state, N(0), NewJob(4).Gpus(5)).tasks, 1) << "spanning groups is allowed";

  const ResolvedRequest four = ResolveRequest(state.nodes(), NewJob(5).Gpus(4).OneGroup());
  const std::optional<Placement> placement = Place(state.capacity(), four.request);
  ASSERT_TRUE(placement);
  EXPECT_EQ(placement->tasks[0].gpus, GpuMask{0b11110000});
  const ResolvedRequest gang = ResolveRequest(state.nodes(), NewJob(6).Gpus(2).Tasks(3).OneGroup());
  const std::optional<Placement> spread = Place(state.capacity(), gang.request);
  ASSERT_TRUE(spread);
  for (const TaskPlacement& task : spread->tasks) {
    const int first = std::countr_zero(task.gpus);
    const int last = 63 - std::countl_zero(task.gpus);
    EXPECT_EQ(first / 4, last / 4) << "a task spans groups: mask " << task.gpus;
  }
  EXPECT_FALSE(Place(state.capacity(),
                     ResolveRequest(state.nodes(), NewJob(7).Gpus(2).Tasks(4).OneGroup()).request))
      << "three tasks of 2 fit inside groups, a fourth does not";
  const ResolvedRequest five = ResolveRequest(state.nodes(), NewJob(8).Gpus(5).OneGroup());
  EXPECT_FALSE(FitsEmptyCluster(state.nodes(), five.request)) << "no group has 5 GPUs at all";
  EXPECT_EQ(TallyEver(state.nodes(), five.request).rejected_by(NodeRejection::kInterconnect), 1);
}

TEST(NodeFiltersTest, AnExpressionThatDoesNotParseRejectsEveryNodeAndSaysWhy) {
  ClusterState state;
  state.AddNode(Node("n0", "A100", 8, {"ib"}));
  const ResolvedRequest request_resolved =
      ResolveRequest(state.nodes(), NewJob(1).Constraint("ib&"));
  const PlacementRequest& request = request_resolved.request;
  EXPECT_EQ(FitOn(LiveNode(state.capacity(), N(0)), request).rejected, NodeRejection::kFeatures);
  const NodeTally tally = TallyEver(state.nodes(), request);
  ASSERT_TRUE(tally.constraint_error);
  EXPECT_NE(tally.constraint_error->find("at position 4"), std::string::npos);
}

TEST(NodeFiltersTest, TallyCountsEveryNodeByItsFirstRejection) {
  ClusterState state;
  for (int i = 0; i < 8; ++i) state.AddNode(Node("a" + std::to_string(i), "A100", 4));
  for (int i = 0; i < 3; ++i) state.AddNode(Node("h" + std::to_string(i), "H100", 8));
  state.AddNode(Node("a8", "A100", 4));
  for (int i = 0; i < 8; ++i) Occupy(state, 100 + i, N(i), 1);  // 3 free on each
  state.SetNodeState(N(11), NodeState::kDraining);

  const ResolvedRequest request_resolved =
      ResolveRequest(state.nodes(), NewJob(1).Gpus(4).Type("A100"));

  const PlacementRequest& request = request_resolved.request;
  const NodeTally tally = TallyNow(state.capacity(), request);
  EXPECT_EQ(tally.nodes, 12);
  EXPECT_EQ(tally.fit, 0);
  EXPECT_EQ(tally.rejected_by(NodeRejection::kGpus), 8);
  EXPECT_EQ(tally.rejected_by(NodeRejection::kGpuModel), 3);
  EXPECT_EQ(tally.rejected_by(NodeRejection::kDraining), 1);
  EXPECT_EQ(tally.other_models, (std::vector<std::pair<std::string, int64_t>>{{"H100", 3}}));
  EXPECT_EQ(tally.largest_gpus, 3);
  EXPECT_EQ(tally.free_gpus, 24) << "enough A100s free in total, on no one node";
  EXPECT_EQ(BlockedReason(tally, request), ReasonCode::kFragmentation);

  // As if every node were up and empty, 9 A100 nodes could each take one.
  const NodeTally ever = TallyEver(state.nodes(), request);
  EXPECT_EQ(ever.fit, 9);
  EXPECT_EQ(ever.tasks, 9);
  EXPECT_EQ(ever.largest_gpus, 4);
}

TEST(NodeFiltersTest, BlockedReasonFromTheTally) {
  ClusterState state;
  state.AddNode(Node("a0", "A100", 8));
  state.AddNode(Node("a1", "A100", 8));
  state.AddNode(Node("h0", "H100", 8));
  Occupy(state, 100, N(0), 8);
  auto reason = [&](const JobSpec& job) {
    const ResolvedRequest request_resolved = ResolveRequest(state.nodes(), job);
    const PlacementRequest& request = request_resolved.request;
    return BlockedReason(TallyNow(state.capacity(), request), request);
  };
  state.SetNodeState(N(1), NodeState::kDraining);
  // a0 is up and full: a lack of GPUs, although H100s are free.
  EXPECT_EQ(reason(NewJob(1).Gpus(1).Type("A100")), ReasonCode::kResources);
  EXPECT_EQ(reason(NewJob(2).Gpus(1).NodeList({"a0"})), ReasonCode::kResources);
  // Only a1 may take it, and it is draining: a lack of nodes.
  EXPECT_EQ(reason(NewJob(3).Gpus(1).NodeList({"a1"})), ReasonCode::kNodesUnavailable);
  state.SetNodeState(N(0), NodeState::kDown);
  EXPECT_EQ(reason(NewJob(4).Gpus(1).Type("A100")), ReasonCode::kNodesUnavailable);
}

TEST(NodeFiltersTest, PlaceOrExplainSaysPlacedBlockedOrInfeasible) {
  ClusterState state;
  state.AddNode(Node("a0", "A100", 4, {"ib"}));
  state.AddNode(Node("a1", "A100", 4));
  Occupy(state, 100, N(0), 4);
  auto outcome = [&](const JobSpec& job) {
    return PlaceOrExplain(state.capacity(), ResolveRequest(state.nodes(), job).request);
  };
  const PlacementOutcome placed = outcome(NewJob(1).Gpus(4));
  ASSERT_TRUE(std::holds_alternative<Placed>(placed));
  EXPECT_EQ(std::get<Placed>(placed).placement.tasks[0].node, N(1));

  const PlacementOutcome blocked = outcome(NewJob(2).Gpus(4).Constraint("ib"));
  ASSERT_TRUE(std::holds_alternative<Blocked>(blocked));
  EXPECT_EQ(std::get<Blocked>(blocked).reason, ReasonCode::kResources);
  EXPECT_EQ(std::get<Blocked>(blocked).nodes.rejected_by(NodeRejection::kGpus), 1);
  EXPECT_EQ(std::get<Blocked>(blocked).nodes.rejected_by(NodeRejection::kFeatures), 1);

  const PlacementOutcome never = outcome(NewJob(3).Gpus(8));
  ASSERT_TRUE(std::holds_alternative<Infeasible>(never));
  EXPECT_EQ(std::get<Infeasible>(never).nodes.rejected_by(NodeRejection::kGpus), 2);
  EXPECT_EQ(std::get<Infeasible>(never).nodes.largest_gpus, 4);
}

// Every placement path agrees with the pipeline: a random cluster (models,
// features, states, partial use) and random requests (shapes, gangs, model
// sets, constraints); each path's placement lands only where the pipeline
// allows, and a path finds a placement exactly when the pipeline says the
// nodes of one model can host every task.
TEST(NodeFiltersTest, EveryPlacementPathAgreesWithThePipeline) {
  std::mt19937 rng(20261204);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const std::vector<std::string> models = {"A100", "H100", "V100"};
  const std::vector<std::string> features = {"ib", "nvlink", "ssd"};
  int placed = 0;
  int refused = 0;
  for (int round = 0; round < 60; ++round) {
    ClusterState state;
    const int node_count = pick(1, 12);
    for (int n = 0; n < node_count; ++n) {
      std::set<std::string, std::less<>> has;
      for (const std::string& feature : features) {
        if (pick(0, 1) == 0) has.insert(feature);
      }
      NodeSpec spec =
          MakeNodeSpec("n" + std::to_string(n), models[static_cast<size_t>(pick(0, 2))],
                       pick(0, 2) == 0 ? 4 : 8, Cores(pick(4, 32)), MemoryMiB(1024 * pick(8, 64)));
      spec.features = std::move(has);
      const int group_size = pick(0, 1) == 0 ? 2 : 4;
      for (GpuDevice& gpu : spec.gpus) gpu.interconnect_group = gpu.index / group_size;
      state.AddNode(spec);
    }
    int64_t id = 1000;
    for (int n = 0; n < node_count; ++n) {
      const NodeId node = N(n);
      const int used = pick(0, static_cast<int>(state.nodes().spec(node).gpus.size()));
      if (used > 0) Occupy(state, id++, node, used, 1000 * pick(0, 3), 1024 * pick(0, 4));
      const int roll = pick(0, 9);
      if (roll == 0) state.SetNodeState(node, NodeState::kDraining);
      if (roll == 1) state.SetNodeState(node, NodeState::kDown);
    }
    const std::vector<std::string> constraints = {"", "ib", "ib&nvlink", "ssd|nvlink", "!ib"};
    FragmentationModel model({WorkloadShape{TaskShape{WholeGpus(1), {}, {}}, std::nullopt, 3},
                              WorkloadShape{TaskShape{WholeGpus(4), {}, {}}, std::nullopt, 1}});
    for (int r = 0; r < 40; ++r) {
      testing::JobBuilder job(r + 1);
      const int shape = pick(0, 3);
      if (shape == 0) job.Gpus(1 << pick(0, 3)).Tasks(pick(1, 4));
      if (shape == 1) job.GpuMilli(250 * pick(1, 3)).Tasks(pick(1, 3));
      if (shape == 2) job.Gpus(pick(1, 2)).Cpu(1000 * pick(1, 8)).Memory(1024 * pick(1, 16));
      if (shape == 3) job.Gpus(0).Cpu(1000 * pick(1, 8)).Tasks(pick(1, 3));
      if (shape == 3) job.GpuMilli(0);
      const int models_roll = pick(0, 3);
      if (models_roll == 1) job.Type(models[static_cast<size_t>(pick(0, 2))]);
      if (models_roll == 2) job.Types({"A100", "H100"});
      if (models_roll == 3) job.Type("B200");
      job.Constraint(constraints[static_cast<size_t>(pick(0, 4))]);
      if (pick(0, 5) == 0) job.NodeList({"n0", "n1", "n2"});
      if (pick(0, 5) == 0) job.Exclude({"n1"});
      if (pick(0, 3) == 0) job.OneGroup();
      const JobSpec spec = job;
      const ResolvedRequest request_resolved = ResolveRequest(state.nodes(), spec);
      const PlacementRequest& request = request_resolved.request;

      // What the pipeline says: tasks per model, now and on an empty cluster.
      std::map<GpuTypeId, int64_t> now_by_model;
      std::map<GpuTypeId, int64_t> ever_by_model;
      for (size_t n = 0; n < state.nodes().size(); ++n) {
        const NodeId node = N(static_cast<int32_t>(n));
        now_by_model[state.nodes().type_of(node)] +=
            FitOn(LiveNode(state.capacity(), node), request).tasks;
        ever_by_model[state.nodes().type_of(node)] +=
            FitOn(EmptyNode(state.nodes(), node), request).tasks;
      }
      auto hosts_all = [&](const std::map<GpuTypeId, int64_t>& by_model) {
        for (const auto& [type, tasks] : by_model) {
          if (tasks >= request.tasks) return true;
        }
        return false;
      };
      auto total = [](const std::map<GpuTypeId, int64_t>& by_model) {
        int64_t sum = 0;
        for (const auto& [type, tasks] : by_model) sum += tasks;
        return sum;
      };
      // A gang of whole GPUs never mixes models; the scan that places
      // shares and CPU-only tasks takes any node the pipeline allows.
      const bool fits_now = request.shape.whole_gpus() > 0 ? hosts_all(now_by_model)
                                                           : total(now_by_model) >= request.tasks;
      EXPECT_EQ(FitsEmptyCluster(state.nodes(), request), hosts_all(ever_by_model));

      PlaceOptions fragmentation;
      fragmentation.fragmentation = &model;
      PlaceOptions buckets = fragmentation;
      buckets.whole_gpus_by_bucket = true;
      for (const PlaceOptions& options : {PlaceOptions{}, fragmentation, buckets}) {
        const std::optional<Placement> placement = Place(state.capacity(), request, options);
        ASSERT_EQ(placement.has_value(), fits_now)
            << "round " << round << " request " << r << " tasks " << request.tasks << " gpu "
            << request.shape.gpu.value() << " constraint '"
            << (spec.constraints ? spec.constraints->features : "") << "'";
        if (!placement) continue;
        EXPECT_TRUE(state.capacity().CanAllocate(*placement));
        std::map<NodeId, int64_t> tasks_on;
        for (const TaskPlacement& task : placement->tasks) ++tasks_on[task.node];
        for (const auto& [node, tasks] : tasks_on) {
          EXPECT_GE(FitOn(LiveNode(state.capacity(), node), request).tasks, tasks);
        }
      }
      const PlacementOutcome outcome = PlaceOrExplain(state.capacity(), request);
      if (fits_now) {
        ++placed;
        EXPECT_TRUE(std::holds_alternative<Placed>(outcome));
      } else {
        ++refused;
        EXPECT_EQ(std::holds_alternative<Infeasible>(outcome),
                  !FitsEmptyCluster(state.nodes(), request));
        // The index's shortcut and the tally agree on why.
        if (const Blocked* blocked = std::get_if<Blocked>(&outcome)) {
          EXPECT_EQ(BlockedReason(state.capacity(), request), blocked->reason);
        }
      }
    }
  }
  // The rounds exercise both answers.
  EXPECT_GT(placed, 300);
  EXPECT_GT(refused, 300);
}

}  // namespace
}  // namespace berth::core
