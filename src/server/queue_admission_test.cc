// A submission meets its queue's rules (issue 27, item 4): who may submit,
// the highest priority, the longest time limit, GPUs beyond the per-user
// limit; the default queue; a parent's rules bind its children.
#include "server/queue_admission.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace berth::server {
namespace {

using ::testing::HasSubstr;

core::QueueSpec Queue(std::string name, std::string parent = "") {
  core::QueueSpec spec;
  spec.name = std::move(name);
  spec.parent = std::move(parent);
  return spec;
}

store::JobRequest Request(std::string queue, int gpus = 1) {
  store::JobRequest request;
  request.queue = std::move(queue);
  request.task.gpu = core::WholeGpus(gpus);
  return request;
}

// A submitter whose groups come from a table, counting the lookups.
struct Groups {
  std::map<std::string, std::vector<std::string>> of;
  int lookups = 0;
  Submitter User(const std::string& user, bool admin = false) {
    return Submitter(user, admin, [this](const std::string& name) {
      ++lookups;
      auto it = of.find(name);
      return it == of.end() ? std::vector<std::string>{} : it->second;
    });
  }
};

Status Admit(const core::QuotaTree& tree, Submitter who, store::JobRequest request) {
  return AdmitToQueue(tree, who, request);
}

TEST(QueueAdmissionTest, OnlyListedUsersAndGroupsMaySubmit) {
  core::QueueSpec vision = Queue("vision");
  vision.allow_users = {"alice"};
  vision.allow_groups = {"cv-team"};
  const core::QuotaTree tree = core::QuotaTree::Make({vision, Queue("open")}).value();
  Groups groups;
  groups.of = {{"carol", {"carol", "cv-team"}}, {"bob", {"bob", "nlp"}}};

  EXPECT_TRUE(Admit(tree, groups.User("alice"), Request("vision")).ok());
  EXPECT_EQ(groups.lookups, 0) << "a listed user needs no group lookup";
  EXPECT_TRUE(Admit(tree, groups.User("carol"), Request("vision")).ok()) << "by group";
  const Status bob = Admit(tree, groups.User("bob"), Request("vision"));
  EXPECT_EQ(bob.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(bob.message(),
            "user bob may not submit to queue vision (allow_users: alice; allow_groups: cv-team)");
  EXPECT_TRUE(Admit(tree, groups.User("bob"), Request("open")).ok()) << "empty lists: everyone";
  EXPECT_TRUE(Admit(tree, groups.User("root", /*admin=*/true), Request("vision")).ok())
      << "admins submit anywhere";
}

TEST(QueueAdmissionTest, PriorityOverTheQueuesMaximumIsRefusedExceptForAdmins) {
  core::QueueSpec vision = Queue("vision");
  vision.max_priority = 100;
  const core::QuotaTree tree = core::QuotaTree::Make({vision}).value();
  Groups groups;
  store::JobRequest high = Request("vision");
  high.priority = 900;
  const Status refused = Admit(tree, groups.User("bob"), high);
  EXPECT_EQ(refused.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(refused.message(), "priority 900 is over queue vision's max_priority 100");
  high.priority = 100;
  EXPECT_TRUE(Admit(tree, groups.User("bob"), high).ok()) << "the maximum itself is allowed";
  high.priority = 900;
  EXPECT_TRUE(Admit(tree, groups.User("root", true), high).ok()) << "admins are unlimited";
}

TEST(QueueAdmissionTest, TheLongestTimeLimitBoundsLimitsAndEstimatesAndIsTheDefault) {
  core::QueueSpec vision = Queue("vision");
  vision.max_time = core::Duration::Hours(24);
  const core::QuotaTree tree = core::QuotaTree::Make({vision}).value();
  Groups groups;
  Submitter bob = groups.User("bob");

  store::JobRequest unlimited = Request("vision");
  ASSERT_TRUE(AdmitToQueue(tree, bob, unlimited).ok());
  EXPECT_EQ(unlimited.time_limit, core::Duration::Hours(24)) << "no limit: the queue's";

  store::JobRequest too_long = Request("vision");
  too_long.time_limit = core::Duration::Hours(25);
  EXPECT_EQ(Admit(tree, groups.User("bob"), too_long).message(),
            "time_limit_s 90000 is over queue vision's max_time_s 86400");
  EXPECT_EQ(Admit(tree, groups.User("root", true), too_long).code(), StatusCode::kPermissionDenied)
      << "the queue's turnover holds for admins too";

  store::JobRequest long_estimate = Request("vision");
  long_estimate.estimate = core::Duration::Hours(30);
  EXPECT_EQ(Admit(tree, groups.User("bob"), long_estimate).message(),
            "estimate_s 108000 is over queue vision's max_time_s 86400");
}

TEST(QueueAdmissionTest, AJobAskingNoMemoryGetsItsQueuesDefault) {
  core::QueueSpec gpu = Queue("gpu");
  gpu.default_memory.per_gpu = core::MemoryMiB(24576);
  gpu.default_memory.per_cpu = core::MemoryMiB(3072);
  core::QueueSpec child = Queue("child", "gpu");
  const core::QuotaTree tree = core::QuotaTree::Make({gpu, child, Queue("plain")}).value();
  Groups groups;
  Submitter bob = groups.User("bob");

  store::JobRequest with_gpus = Request("gpu", 2);
  with_gpus.tasks = 3;
  ASSERT_TRUE(AdmitToQueue(tree, bob, with_gpus).ok());
  EXPECT_EQ(with_gpus.task.memory, core::MemoryMiB(2 * 24576)) << "per GPU, for each task";
  with_gpus.slurm_tasks_per_node = {1, 1, 1};
  with_gpus.task.memory = core::MemoryMiB(0);
  ASSERT_TRUE(AdmitToQueue(tree, bob, with_gpus).ok());
  EXPECT_FALSE(with_gpus.env.contains("SLURM_MEM_PER_CPU")) << "given per GPU: no per-CPU variable";

  store::JobRequest cpus_only = Request("child", 0);
  cpus_only.task.cpu = core::Cores(4);
  ASSERT_TRUE(AdmitToQueue(tree, bob, cpus_only).ok());
  EXPECT_EQ(cpus_only.task.memory, core::MemoryMiB(4 * 3072)) << "per CPU, from its parent";

  store::JobRequest slurm = Request("gpu", 0);  // -N 2 -n 3: 2 + 1 Slurm tasks
  slurm.tasks = 2;
  slurm.slurm_tasks_per_node = {2, 1};
  ASSERT_TRUE(AdmitToQueue(tree, bob, slurm).ok());
  EXPECT_EQ(slurm.task.memory, core::MemoryMiB(2 * 3072)) << "a CPU per Slurm task";
  EXPECT_EQ(slurm.env["SLURM_MEM_PER_CPU"], "3072") << "as Slurm's batch environment has it";
  EXPECT_FALSE(cpus_only.env.contains("SLURM_MEM_PER_CPU")) << "not a Slurm job";

  store::JobRequest asked = Request("gpu", 2);
  asked.task.memory = core::MemoryMiB(1000);
  ASSERT_TRUE(AdmitToQueue(tree, bob, asked).ok());
  EXPECT_EQ(asked.task.memory, core::MemoryMiB(1000)) << "what a job asks is kept";

  store::JobRequest ungoverned = Request("plain", 2);
  ASSERT_TRUE(AdmitToQueue(tree, bob, ungoverned).ok());
  EXPECT_EQ(ungoverned.task.memory, core::MemoryMiB(0)) << "no default: none, as before";
}

// A queue "gpu" with Slurm's golden partition defaults: DefMemPerGPU=24576
// DefMemPerCPU=3072.
core::QuotaTree GoldenGpuQueue() {
  core::QueueSpec gpu = Queue("gpu");
  gpu.default_memory.per_gpu = core::MemoryMiB(24576);
  gpu.default_memory.per_cpu = core::MemoryMiB(3072);
  return core::QuotaTree::Make({gpu}).value();
}

TEST(QueueAdmissionTest, TasksOfTheirOwnShapesGetTheDefaultForTheirOwnShape) {
  const core::QuotaTree tree = GoldenGpuQueue();
  Groups groups;
  Submitter bob = groups.User("bob");
  // -N 2 --gpus=6: 5 + 1 GPUs, as Slurm gave 122880 and 24576 MiB.
  store::JobRequest packed = Request("gpu", 5);
  packed.tasks = 2;
  packed.distinct_nodes = true;
  packed.slurm_tasks_per_node = {1, 1};
  packed.task_shapes = {{core::WholeGpus(5), core::MilliCpu(0), core::MemoryMiB(0)},
                        {core::WholeGpus(1), core::MilliCpu(0), core::MemoryMiB(0)}};
  ASSERT_TRUE(AdmitToQueue(tree, bob, packed).ok());
  EXPECT_EQ(packed.task_shapes[0].memory, core::MemoryMiB(122880));
  EXPECT_EQ(packed.task_shapes[1].memory, core::MemoryMiB(24576));
  EXPECT_EQ(packed.task, packed.task_shapes[0]) << "the largest of them";
  // -N 2 -n 3 without GPUs: a CPU for each of the node's own Slurm tasks.
  store::JobRequest tasks = Request("gpu", 0);
  tasks.tasks = 2;
  tasks.distinct_nodes = true;
  tasks.slurm_tasks_per_node = {2, 1};
  tasks.task_shapes = {{core::MilliGpu(0), core::Cores(2), core::MemoryMiB(0)},
                       {core::MilliGpu(0), core::Cores(1), core::MemoryMiB(0)}};
  ASSERT_TRUE(AdmitToQueue(tree, bob, tasks).ok());
  EXPECT_EQ(tasks.task_shapes[0].memory, core::MemoryMiB(2 * 3072));
  EXPECT_EQ(tasks.task_shapes[1].memory, core::MemoryMiB(3072));
}

TEST(QueueAdmissionTest, AJobWhoseGpusCameWithItsNodeGetsThePerCpuDefault) {
  const core::QuotaTree tree = GoldenGpuQueue();
  Groups groups;
  Submitter bob = groups.User("bob");
  // -N 1 --exclusive on 8 GPUs and 32 CPUs: Slurm gave 98304 MiB.
  store::JobRequest exclusive = Request("gpu", 8);
  exclusive.task.cpu = core::Cores(32);
  exclusive.slurm_tasks_per_node = {1};
  exclusive.default_memory_per_cpu = true;
  ASSERT_TRUE(AdmitToQueue(tree, bob, exclusive).ok());
  EXPECT_EQ(exclusive.task.memory, core::MemoryMiB(32 * 3072));
  EXPECT_EQ(exclusive.env["SLURM_MEM_PER_CPU"], "3072");
  // Without it, the GPUs decide.
  exclusive.default_memory_per_cpu = false;
  exclusive.task.memory = core::MemoryMiB(0);
  exclusive.env.clear();
  ASSERT_TRUE(AdmitToQueue(tree, bob, exclusive).ok());
  EXPECT_EQ(exclusive.task.memory, core::MemoryMiB(8 * 24576));
  EXPECT_FALSE(exclusive.env.contains("SLURM_MEM_PER_CPU"));
}

TEST(QueueAdmissionTest, AJobLargerThanThePerUserLimitCouldNeverStart) {
  core::QueueSpec vision = Queue("vision");
  vision.max_gpus_per_user = core::WholeGpus(8);
  const core::QuotaTree tree = core::QuotaTree::Make({vision}).value();
  Groups groups;
  store::JobRequest big = Request("vision", 4);
  big.tasks = 3;
  const Status refused = Admit(tree, groups.User("bob"), big);
  EXPECT_EQ(refused.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(refused.message(),
            "12 GPUs is over queue vision's max_gpus_per_user 8: it could never start");
  big.tasks = 2;
  EXPECT_TRUE(Admit(tree, groups.User("bob"), big).ok());
  // Tasks of their own shapes count every task's own GPUs.
  big.distinct_nodes = true;
  big.task_shapes = {{core::WholeGpus(8), core::MilliCpu(0), core::MemoryMiB(0)},
                     {core::WholeGpus(1), core::MilliCpu(0), core::MemoryMiB(0)}};
  EXPECT_EQ(Admit(tree, groups.User("bob"), big).message(),
            "9 GPUs is over queue vision's max_gpus_per_user 8: it could never start");
}

TEST(QueueAdmissionTest, AParentsRulesBindItsChildren) {
  core::QueueSpec research = Queue("research");
  research.max_priority = 10;
  research.allow_groups = {"researchers"};
  research.max_time = core::Duration::Hours(48);
  core::QueueSpec vision = Queue("vision", "research");
  vision.max_priority = 500;  // cannot widen the parent's
  vision.max_time = core::Duration::Hours(72);
  const core::QuotaTree tree = core::QuotaTree::Make({research, vision}).value();
  Groups groups;
  groups.of = {{"alice", {"researchers"}}};
  store::JobRequest request = Request("vision");
  request.priority = 50;
  EXPECT_EQ(Admit(tree, groups.User("alice"), request).message(),
            "priority 50 is over queue research's max_priority 10");
  EXPECT_THAT(Admit(tree, groups.User("bob"), Request("vision")).message(),
              HasSubstr("user bob may not submit to queue research"));
  Submitter alice = groups.User("alice");
  store::JobRequest unlimited = Request("vision");
  ASSERT_TRUE(AdmitToQueue(tree, alice, unlimited).ok());
  EXPECT_EQ(unlimited.time_limit, core::Duration::Hours(48)) << "the smallest on the path";
}

TEST(QueueAdmissionTest, AJobNamingNoQueueGoesToTheDefaultOne) {
  core::QueueSpec general = Queue("general");
  general.is_default = true;
  general.max_priority = 0;
  Groups groups;
  store::JobRequest request = Request("");
  request.priority = 5;
  const core::QuotaTree governed = core::QuotaTree::Make({Queue("vision"), general}).value();
  EXPECT_EQ(Admit(governed, groups.User("bob"), request).message(),
            "priority 5 is over queue general's max_priority 0");
  request.priority = 0;
  Submitter bob = groups.User("bob");
  ASSERT_TRUE(AdmitToQueue(governed, bob, request).ok());
  EXPECT_EQ(request.queue, "general");

  const core::QuotaTree plain = core::QuotaTree::Make({Queue("vision")}).value();
  store::JobRequest unnamed = Request("");
  unnamed.priority = 900;
  ASSERT_TRUE(AdmitToQueue(plain, bob, unnamed).ok()) << "no default: the ungoverned queue";
  EXPECT_EQ(unnamed.queue, "");

  const Status unknown = Admit(plain, groups.User("bob"), Request("visoin"));
  EXPECT_EQ(unknown.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.message(), "queue: no queue named 'visoin'");
}

}  // namespace
}  // namespace berth::server
