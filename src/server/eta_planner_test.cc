// The ETA planner thread: plans arrive and their ETAs come back on its own
// thread; a plan waiting when a newer one arrives is replaced.
#include "server/eta_planner.h"

#include <gtest/gtest.h>

#include <future>
#include <memory>

#include "core/node.h"
#include "core/node_table.h"

namespace berth::server {
namespace {

// One 8-GPU node running a job until t=100 on all of it, and `queued`
// one-GPU jobs waiting in order.
core::EtaPlan PlanOn(int queued) {
  auto nodes = std::make_shared<core::NodeTable>();
  nodes->Add(core::MakeNodeSpec("n0", "H100", 8));
  core::Capacity capacity(nodes.get());
  capacity.SyncNodes();
  core::Placement busy;
  busy.shape.gpu = core::WholeGpus(8);
  busy.tasks.push_back(core::TaskPlacement{core::NodeId{0}, 0xff});
  capacity.Allocate(busy);
  core::EtaPlan plan{
      core::Time::FromSeconds(0), core::Discipline::kStrict, nodes, capacity, {}, {}, {}};
  plan.ends.push_back({core::Time::FromSeconds(100), core::JobId{1}, busy});
  for (int i = 0; i < queued; ++i) {
    core::PlacementRequest request;
    request.tasks = 1;
    request.shape.gpu = core::WholeGpus(1);
    plan.queue.push_back({core::JobId{10 + i}, request, core::Duration::Seconds(50)});
  }
  return plan;
}

TEST(EtaPlannerTest, APlanComesBackWithItsEtas) {
  std::promise<std::vector<core::PlannedEta>> result;
  EtaPlanner planner([&](std::vector<core::PlannedEta> etas, auto decided_in, auto, auto) {
    EXPECT_EQ(decided_in, std::chrono::milliseconds(7));
    result.set_value(std::move(etas));
  });
  planner.Submit(PlanOn(9), std::chrono::milliseconds(7));
  std::future<std::vector<core::PlannedEta>> done = result.get_future();
  ASSERT_EQ(done.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  const std::vector<core::PlannedEta> etas = done.get();
  ASSERT_EQ(etas.size(), 9u);
  EXPECT_EQ(etas[0].eta, core::Time::FromSeconds(100)) << "when the running job ends";
  EXPECT_EQ(etas[0].after_job, core::JobId{1});
  EXPECT_EQ(etas[7].eta, core::Time::FromSeconds(100)) << "eight fit then";
  EXPECT_EQ(etas[8].eta, core::Time::FromSeconds(150)) << "the ninth after the first ends";
}

TEST(EtaPlannerTest, OnlyTheNewestWaitingPlanRunsAndStoppingDropsAWaitingOne) {
  std::mutex mutex;
  std::vector<size_t> sizes;
  std::promise<void> first_started;
  std::promise<void> release_first;
  std::shared_future<void> released = release_first.get_future().share();
  bool first = true;
  {
    EtaPlanner planner([&](std::vector<core::PlannedEta> etas, auto, auto, auto) {
      bool wait = false;
      {
        std::lock_guard lock(mutex);
        sizes.push_back(etas.size());
        wait = std::exchange(first, false);
      }
      if (wait) {
        first_started.set_value();
        released.wait();  // holds the planner while more plans arrive
      }
    });
    planner.Submit(PlanOn(1), {});
    first_started.get_future().wait();
    planner.Submit(PlanOn(2), {});
    planner.Submit(PlanOn(3), {});  // replaces the one of 2
    release_first.set_value();
    for (int i = 0; i < 1000; ++i) {
      {
        std::lock_guard lock(mutex);
        if (sizes.size() == 2) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::lock_guard lock(mutex);
    ASSERT_EQ(sizes, (std::vector<size_t>{1, 3}));
  }  // the destructor joins; nothing was waiting
}

}  // namespace
}  // namespace berth::server
