// The v2 device filter, loaded, attached and run for real: cgroup-bpf works
// on the unified hierarchy even on a hybrid host, whose controllers live in
// v1. A child process joins a fresh cgroup with the filter and opens
// stand-in device nodes (made with mknod, numbered as /dev/full and
// /dev/random: harmless devices that open without side effects).
#include "agent/device_program.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "agent/cgroup_setup.h"
#include "agent/testing/test_util.h"

namespace berth::agent {
namespace {

using testing::TempDir;

// A new cgroup v2 directory under this process's own, or nullopt (with the
// reason in `why`) where the unified hierarchy is not writable.
std::optional<std::string> MakeUnifiedCgroup(std::string& why) {
  if (::geteuid() != 0) {
    why = "needs root (cgroups, BPF)";
    return std::nullopt;
  }
  const std::vector<CgroupMount> mounts = ParseCgroupMounts(testing::Slurp("/proc/self/mountinfo"));
  const std::map<std::string, std::string> own =
      ParseProcCgroup(testing::Slurp("/proc/self/cgroup"));
  for (const CgroupMount& mount : mounts) {
    if (!mount.unified || !own.contains("")) continue;
    const std::string dir =
        mount.mount_point + own.at("") + "/berth-device-test-" + std::to_string(::getpid());
    if (::mkdir(dir.c_str(), 0755) == 0) return dir;
    why = "cannot create " + dir + ": " + std::strerror(errno);
    return std::nullopt;
  }
  why = "no cgroup2 filesystem is mounted";
  return std::nullopt;
}

// In a child that joined `cgroup`: opens each path; bit i set when path i
// was refused with EPERM.
int RefusedOpens(const std::string& cgroup, const std::vector<std::string>& paths) {
  const int procs = ::open((cgroup + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
  const pid_t child = ::fork();
  if (child == 0) {
    if (::write(procs, "0", 1) != 1) ::_exit(255);
    int refused = 0;
    for (size_t i = 0; i < paths.size(); ++i) {
      const int fd = ::open(paths[i].c_str(), O_RDONLY);
      if (fd < 0 && errno == EPERM) refused |= 1 << i;
      if (fd >= 0) ::close(fd);
    }
    ::_exit(refused);
  }
  ::close(procs);
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(DeviceProgramTest, ATaskCannotOpenTheDevicesDeniedToIt) {
  std::string why;
  const std::optional<std::string> cgroup = MakeUnifiedCgroup(why);
  if (!cgroup) GTEST_SKIP() << "cgroup v2 device filter not testable here: " << why;
  const std::unique_ptr<const std::string, void (*)(const std::string*)> remove_cgroup(
      &*cgroup, [](const std::string* dir) { ::rmdir(dir->c_str()); });
  TempDir dir;
  const std::string own = dir.path() + "/gpu0";
  const std::string other = dir.path() + "/gpu1";
  ASSERT_EQ(::mknod(own.c_str(), S_IFCHR | 0666, makedev(1, 7)), 0);
  ASSERT_EQ(::mknod(other.c_str(), S_IFCHR | 0666, makedev(1, 8)), 0);
  EXPECT_EQ(RefusedOpens(*cgroup, {own, other}), 0);  // no filter yet

  // The other task's GPU, among many (a node's worth, and then some).
  std::vector<DeviceNumber> denied = {DeviceNumber{1, 8}};
  for (uint32_t minor = 0; minor < 63; ++minor) denied.push_back(DeviceNumber{195, minor});
  const Status attached = AttachDeviceFilter(*cgroup, denied);
  ASSERT_TRUE(attached.ok()) << attached.ToString();
  EXPECT_EQ(RefusedOpens(*cgroup, {own, other, "/dev/null"}), 0b010);
}

}  // namespace
}  // namespace berth::agent
