// A task's cgroup as files: what is written for each limit and read back as
// usage, on v1 and v2, against fake cgroup trees in a temporary directory
// (the same code the kernel's files get; cgroup_enforcement_test.cc runs
// it on real cgroups).
#include "agent/task_cgroup.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "agent/testing/test_util.h"

namespace berth::agent {
namespace {

using ::testing::HasSubstr;
using testing::Slurp;
using testing::TempDir;

// What a kernel with swap accounting shows in a new cgroup (the code only
// writes the swap limit where the kernel has one).
void KernelFiles(const std::string& dir, std::initializer_list<const char*> names) {
  std::filesystem::create_directories(dir);
  for (const char* name : names) std::ofstream(dir + "/" + name) << "";
}

TEST(TaskCgroupTest, V2LimitsGoToMemoryMaxCpuMaxAndPidsMax) {
  TempDir tree;
  const std::string dir = tree.path() + "/berth-tasks-1/7-0-1";
  KernelFiles(dir, {"memory.swap.max"});
  TaskCgroup cgroup;
  cgroup.version = CgroupVersion::kV2;
  for (const char* controller : {"memory", "cpu", "cpuacct", "pids", "devices"}) {
    cgroup.dirs[controller] = dir;
  }
  cgroup.memory_mib = 64;
  cgroup.cpu_milli = 500;
  cgroup.pids_max = 4096;
  ASSERT_TRUE(CreateTaskCgroup(cgroup).ok());
  EXPECT_EQ(Slurp(dir + "/memory.max"), "67108864");
  EXPECT_EQ(Slurp(dir + "/memory.swap.max"), "0");  // no swap on top
  EXPECT_EQ(Slurp(dir + "/cpu.max"), "50000 100000");
  EXPECT_EQ(Slurp(dir + "/pids.max"), "4096");
  EXPECT_EQ(cgroup.Directories(), std::vector<std::string>{dir});
}

TEST(TaskCgroupTest, V1LimitsGoToEachControllersHierarchy) {
  TempDir tree;
  TaskCgroup cgroup;
  cgroup.version = CgroupVersion::kV1;
  for (const char* controller : {"memory", "cpu", "cpuacct", "pids", "devices"}) {
    cgroup.dirs[controller] = tree.path() + "/" + controller + "/t";
    std::filesystem::create_directories(tree.path() + "/" + controller);
  }
  KernelFiles(cgroup.dirs["memory"], {"memory.memsw.limit_in_bytes"});
  cgroup.memory_mib = 2048;
  cgroup.cpu_milli = 1;  // below the kernel's 1 ms minimum
  cgroup.pids_max = 100;
  cgroup.denied_devices = {DeviceNumber{195, 3}};
  ASSERT_TRUE(CreateTaskCgroup(cgroup).ok());
  EXPECT_EQ(Slurp(cgroup.dirs["memory"] + "/memory.limit_in_bytes"), "2147483648");
  EXPECT_EQ(Slurp(cgroup.dirs["memory"] + "/memory.memsw.limit_in_bytes"), "2147483648");
  EXPECT_EQ(Slurp(cgroup.dirs["cpu"] + "/cpu.cfs_period_us"), "100000");
  EXPECT_EQ(Slurp(cgroup.dirs["cpu"] + "/cpu.cfs_quota_us"), "1000");
  EXPECT_EQ(Slurp(cgroup.dirs["pids"] + "/pids.max"), "100");
  EXPECT_EQ(Slurp(cgroup.dirs["devices"] + "/devices.deny"), "c 195:3 rwm");
  EXPECT_EQ(cgroup.Directories().size(), 5u);
}

TEST(TaskCgroupTest, NoLimitsWriteNothingAndAMissingHierarchyIsSkipped) {
  TempDir tree;
  TaskCgroup cgroup;
  cgroup.version = CgroupVersion::kV1;
  cgroup.dirs["memory"] = tree.path() + "/t";
  cgroup.cpu_milli = 500;  // no cpu hierarchy: no quota
  ASSERT_TRUE(CreateTaskCgroup(cgroup).ok());
  EXPECT_TRUE(std::filesystem::is_empty(tree.path() + "/t"));
}

TEST(TaskCgroupTest, AFailedCreationSaysWhereAndLeavesNothing) {
  TempDir tree;
  std::filesystem::create_directories(tree.path() + "/a");
  TaskCgroup cgroup;
  cgroup.version = CgroupVersion::kV1;
  cgroup.dirs["cpu"] = tree.path() + "/a/t";  // made first (in order), then taken back
  cgroup.dirs["memory"] = tree.path() + "/missing/parent/t";
  const Status status = CreateTaskCgroup(cgroup);
  EXPECT_THAT(status.message(), HasSubstr("cannot create the task's cgroup " + tree.path() +
                                          "/missing/parent/t: No such file or directory"));
  EXPECT_FALSE(std::filesystem::exists(tree.path() + "/a/t"));
}

TEST(TaskCgroupTest, UsageIsReadFromEachVersionsFiles) {
  TempDir tree;
  TaskCgroup v1;
  v1.version = CgroupVersion::kV1;
  v1.dirs = {{"memory", tree.path() + "/m"}, {"cpuacct", tree.path() + "/a"}};
  std::filesystem::create_directories(tree.path() + "/m");
  std::filesystem::create_directories(tree.path() + "/a");
  std::ofstream(tree.path() + "/m/memory.max_usage_in_bytes") << "67108864\n";
  std::ofstream(tree.path() + "/m/memory.oom_control")
      << "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n";
  std::ofstream(tree.path() + "/a/cpuacct.usage") << "1021291822\n";
  const CgroupUsage one = ReadCgroupUsage(v1);
  EXPECT_EQ(one.peak_memory_bytes, 67108864);
  EXPECT_EQ(one.cpu_time, core::Duration::Micros(1021291));
  EXPECT_EQ(one.oom_kills, 1);

  TaskCgroup v2;
  v2.version = CgroupVersion::kV2;
  v2.dirs = {{"memory", tree.path() + "/u"}, {"cpu", tree.path() + "/u"}};
  std::filesystem::create_directories(tree.path() + "/u");
  std::ofstream(tree.path() + "/u/memory.events")
      << "low 0\nhigh 0\nmax 12\noom 1\noom_kill 2\noom_group_kill 0\n";
  std::ofstream(tree.path() + "/u/cpu.stat") << "usage_usec 2500000\nuser_usec 2000000\n";
  const CgroupUsage two = ReadCgroupUsage(v2);
  EXPECT_FALSE(two.peak_memory_bytes);  // no memory.peak before Linux 5.19
  EXPECT_EQ(two.cpu_time, core::Duration::Seconds(2) + core::Duration::Millis(500));
  EXPECT_EQ(two.oom_kills, 2);
}

}  // namespace
}  // namespace berth::agent
