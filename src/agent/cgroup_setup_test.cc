// Finding the agent's own cgroup from /proc/self text, and preparing the
// parent of its tasks' cgroups: v2 against a fake cgroup tree in a
// temporary directory (this machine's unified hierarchy has no controllers
// to hand out); v1 for real in cgroup_enforcement_test.cc.
#include "agent/cgroup_setup.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "agent/testing/test_util.h"

namespace berth::agent {
namespace {

using ::testing::HasSubstr;
using testing::Slurp;
using testing::TempDir;

// A hybrid host (this machine's shape): v1 controllers each on their own,
// cgroup2 beside them without controllers.
constexpr char kHybridMountinfo[] =
    "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "32 30 0:29 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "34 30 0:31 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory\n"
    "35 30 0:32 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices\n"
    "38 30 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "39 30 0:36 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
    "41 22 0:5 / /proc rw - proc proc rw\n";
constexpr char kHybridOwn[] =
    "9:name=systemd:/\n8:pids:/\n5:devices:/\n4:memory:/process_api/5871\n2:cpuacct:/\n"
    "1:cpu:/\n0::/\n";

TEST(CgroupSetupTest, ParsesCgroupMountsAndTheirControllers) {
  const std::vector<CgroupMount> mounts = ParseCgroupMounts(kHybridMountinfo);
  ASSERT_EQ(mounts.size(), 7u);
  EXPECT_EQ(mounts[0], (CgroupMount{"/sys/fs/cgroup/cpu", "/", false, {"cpu"}}));
  EXPECT_EQ(mounts[2].controllers, (std::set<std::string>{"memory"}));  // past "shared:9"
  EXPECT_TRUE(mounts[5].controllers.empty());                           // name=systemd
  EXPECT_EQ(mounts[6], (CgroupMount{"/sys/fs/cgroup/unified", "/", true, {}}));
  // Co-mounted controllers, and an escaped space in a mount point.
  const std::vector<CgroupMount> joint = ParseCgroupMounts(
      "31 30 0:28 /kube /sys/fs/cgroup/cpu\\040acct rw - cgroup cgroup rw,cpu,cpuacct\n");
  ASSERT_EQ(joint.size(), 1u);
  EXPECT_EQ(joint[0], (CgroupMount{"/sys/fs/cgroup/cpu acct", "/kube", false, {"cpu", "cpuacct"}}));
}

TEST(CgroupSetupTest, ParsesTheProcessCgroups) {
  const std::map<std::string, std::string> own =
      ParseProcCgroup("4:memory:/a/b\n2:cpu,cpuacct:/c\n1:name=systemd:/d\n0::/e\n");
  EXPECT_EQ(own.at("memory"), "/a/b");
  EXPECT_EQ(own.at("cpu"), "/c");
  EXPECT_EQ(own.at("cpuacct"), "/c");
  EXPECT_EQ(own.at(""), "/e");
}

TEST(CgroupSetupTest, AHybridHostUsesV1EachControllerWhereItsHierarchyHasTheAgent) {
  const CgroupDirs dirs =
      LocateOwnCgroup(ParseCgroupMounts(kHybridMountinfo), ParseProcCgroup(kHybridOwn)).value();
  EXPECT_EQ(dirs.version, CgroupVersion::kV1);
  EXPECT_EQ(dirs.dirs, (std::map<std::string, std::string>{
                           {"cpu", "/sys/fs/cgroup/cpu"},
                           {"cpuacct", "/sys/fs/cgroup/cpuacct"},
                           {"devices", "/sys/fs/cgroup/devices"},
                           {"memory", "/sys/fs/cgroup/memory/process_api/5871"},
                           {"pids", "/sys/fs/cgroup/pids"}}));
}

TEST(CgroupSetupTest, AUnifiedHostUsesV2AndAContainersMountRootIsStripped) {
  const CgroupDirs dirs =
      LocateOwnCgroup(ParseCgroupMounts("40 30 0:37 /kubepods /sys/fs/cgroup rw - cgroup2 cgroup2 "
                                        "rw,nsdelegate\n"),
                      ParseProcCgroup("0::/kubepods/pod1/berth\n"))
          .value();
  EXPECT_EQ(dirs.version, CgroupVersion::kV2);
  for (const auto& [controller, dir] : dirs.dirs) {
    EXPECT_EQ(dir, "/sys/fs/cgroup/pod1/berth") << controller;
  }
  EXPECT_TRUE(dirs.dirs.contains("memory"));
  EXPECT_TRUE(dirs.dirs.contains("devices"));
}

TEST(CgroupSetupTest, NoCgroupsOrNoMemoryHierarchyIsSaid) {
  EXPECT_THAT(LocateOwnCgroup({}, {}).status().message(), HasSubstr("no cgroup filesystem"));
  EXPECT_THAT(LocateOwnCgroup(ParseCgroupMounts("34 30 0:31 / /m rw - cgroup cgroup rw,memory\n"),
                              ParseProcCgroup("4:memory:/\n"))
                  .status()
                  .message(),
              HasSubstr("cgroup v1: no cpu hierarchy is mounted"));
}

TEST(CgroupSetupTest, TheParentIsNamedByTheStateDir) {
  EXPECT_EQ(TaskParentName("/var/lib/berth-agent"), TaskParentName("/var/lib/berth-agent/"));
  EXPECT_NE(TaskParentName("/data/agents/node-1"), TaskParentName("/data/agents/node-2"));
  EXPECT_THAT(TaskParentName("/x"), ::testing::MatchesRegex("berth-tasks-[0-9a-f]{8}"));
}

// A fake v2 cgroup: a directory with the files the kernel would show.
void FakeCgroup(const std::string& dir, const std::string& procs, const std::string& controllers) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/cgroup.procs") << procs;
  std::ofstream(dir + "/cgroup.controllers") << controllers;
  std::ofstream(dir + "/cgroup.subtree_control") << "";
}

CgroupDirs V2At(const std::string& dir) {
  CgroupDirs dirs{CgroupVersion::kV2, {}};
  for (const char* controller : {"memory", "cpu", "cpuacct", "pids", "devices"}) {
    dirs.dirs[controller] = dir;
  }
  return dirs;
}

TEST(CgroupSetupTest, V2TheAgentMovesIntoALeafAndDelegatesToItsTasks) {
  TempDir tree;
  const std::string service = tree.path() + "/berth-agent.service";
  FakeCgroup(service, std::to_string(::getpid()) + "\n", "cpuset cpu io memory pids\n");
  const CgroupDirs parent = PrepareTaskParent(V2At(service), "berth-tasks-1").value();
  EXPECT_EQ(parent.version, CgroupVersion::kV2);
  EXPECT_EQ(parent.dirs.at("memory"), service + "/berth-tasks-1");
  EXPECT_EQ(parent.dirs.at("pids"), service + "/berth-tasks-1");
  // Out of the way of "no internal processes" first, then the controllers.
  EXPECT_EQ(Slurp(service + "/agent/cgroup.procs"), std::to_string(::getpid()));
  EXPECT_EQ(Slurp(service + "/cgroup.subtree_control"), "+memory +cpu +pids");
  EXPECT_EQ(Slurp(service + "/berth-tasks-1/cgroup.subtree_control"), "+memory +cpu +pids");
}

TEST(CgroupSetupTest, V2AnAgentAlreadyInItsLeafDelegatesFromTheParent) {
  // systemd's DelegateSubgroup=agent, or the agent's own move before.
  TempDir tree;
  const std::string service = tree.path() + "/berth-agent.service";
  FakeCgroup(service, "", "cpu memory pids\n");
  FakeCgroup(service + "/agent", std::to_string(::getpid()) + "\n", "cpu memory pids\n");
  const CgroupDirs parent = PrepareTaskParent(V2At(service + "/agent"), "berth-tasks-1").value();
  EXPECT_EQ(parent.dirs.at("cpu"), service + "/berth-tasks-1");
  EXPECT_EQ(Slurp(service + "/cgroup.subtree_control"), "+memory +cpu +pids");
}

TEST(CgroupSetupTest, V2RefusesACgroupSharedWithOthersOrWithoutControllers) {
  TempDir tree;
  const std::string shared = tree.path() + "/session.scope";
  FakeCgroup(shared, "1\n" + std::to_string(::getpid()) + "\n", "cpu memory pids\n");
  EXPECT_THAT(PrepareTaskParent(V2At(shared), "berth-tasks-1").status().message(),
              HasSubstr("holds other processes than the agent (pid 1)"));
  EXPECT_FALSE(std::filesystem::exists(shared + "/agent"));  // nothing moved

  const std::string bare = tree.path() + "/bare.service";
  FakeCgroup(bare, std::to_string(::getpid()) + "\n", "cpu io\n");
  EXPECT_THAT(PrepareTaskParent(V2At(bare), "berth-tasks-1").status().message(),
              HasSubstr("has no memory controller to give its tasks"));
}

}  // namespace
}  // namespace berth::agent
