// Issue 28: the container runtime's detection rules and the command lines
// that run a task in its image, for podman and docker, without a runtime.
#include "agent/container_runtime.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace berth::agent {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsSupersetOf;
using ::testing::Not;

constexpr char kPodmanV1Info[] = R"({"host": {"cgroupVersion": "v1", "cgroupManager": "cgroupfs",
    "ociRuntime": {"name": "runc", "path": "/usr/bin/runc"}}, "version": {"Version": "4.3.1"}})";
constexpr char kPodmanV1CrunInfo[] = R"({"host": {"cgroupVersion": "v1",
    "cgroupManager": "systemd", "ociRuntime": {"name": "crun"}}, "version": {"Version": "4.9.3"}})";
constexpr char kPodmanV2Info[] = R"({"host": {"cgroupVersion": "v2", "cgroupManager": "systemd",
    "ociRuntime": {"name": "crun"}}, "version": {"Version": "5.0.1"}})";
constexpr char kDockerInfo[] = R"({"ServerVersion": "24.0.7", "DefaultRuntime": "runc",
    "CgroupDriver": "systemd", "CgroupVersion": "2"})";

RuntimeHostFacts Facts(const char* info) {
  RuntimeHostFacts facts;
  facts.info_json = info;
  facts.systemd_running = true;
  facts.runc_path = "/usr/sbin/runc";
  facts.nofile_hard = 20000;
  facts.nproc_hard = 96367;
  facts.nr_open = 1 << 20;
  facts.pid_max = 32768;
  return facts;
}

size_t Count(const std::vector<std::string>& argv, const std::string& word) {
  return static_cast<size_t>(std::count(argv.begin(), argv.end(), word));
}

// The value after `flag`, or "" (the first occurrence).
std::string After(const std::vector<std::string>& argv, const std::string& flag) {
  auto it = std::find(argv.begin(), argv.end(), flag);
  return it == argv.end() || it + 1 == argv.end() ? "" : *(it + 1);
}

TEST(ContainerRuntimeTest, UlimitsAreTheAgentsOwnCappedByTheKernel) {
  // The OCI runtime cannot raise a limit above its caller's hard limit
  // without CAP_SYS_RESOURCE: nproc 96367 > pid_max 32768 failed here.
  Result<ContainerRuntime> runtime = RuntimeFromFacts({}, Facts(kPodmanV1Info));
  ASSERT_TRUE(runtime.ok()) << runtime.status().ToString();
  EXPECT_THAT(runtime->run_args,
              ElementsAre("--ulimit", "nofile=20000:20000", "--ulimit", "nproc=32768:32768"));
  RuntimeHostFacts unlimited = Facts(kPodmanV1Info);
  unlimited.nofile_hard.reset();
  unlimited.nproc_hard.reset();
  runtime = RuntimeFromFacts({}, unlimited);
  ASSERT_TRUE(runtime.ok());
  EXPECT_THAT(runtime->run_args,
              ElementsAre("--ulimit", "nofile=1048576:1048576", "--ulimit", "nproc=32768:32768"));
}

TEST(ContainerRuntimeTest, PodmanOnCgroupV1UsesRuncAndCgroupfsWithoutSystemd) {
  Result<ContainerRuntime> runtime = RuntimeFromFacts({}, Facts(kPodmanV1Info));
  ASSERT_TRUE(runtime.ok());
  EXPECT_THAT(runtime->command, ElementsAre("podman"));  // runc and cgroupfs already
  EXPECT_EQ(runtime->description, "podman 4.3.1 (runc, cgroupfs, cgroup v1)");

  RuntimeHostFacts crun = Facts(kPodmanV1CrunInfo);
  crun.systemd_running = false;
  runtime = RuntimeFromFacts({}, crun);
  ASSERT_TRUE(runtime.ok());
  EXPECT_THAT(runtime->command,
              ElementsAre("podman", "--runtime", "/usr/sbin/runc", "--cgroup-manager=cgroupfs"));
  EXPECT_EQ(runtime->description, "podman 4.9.3 (runc, cgroupfs, cgroup v1)");
}

TEST(ContainerRuntimeTest, PodmanOnAnOrdinaryCgroupV2HostKeepsItsDefaults) {
  ContainerRuntimeOptions options;
  options.binary = "/opt/podman/bin/podman";
  options.extra_args = {"--storage-driver=overlay"};
  Result<ContainerRuntime> runtime = RuntimeFromFacts(options, Facts(kPodmanV2Info));
  ASSERT_TRUE(runtime.ok());
  EXPECT_THAT(runtime->command, ElementsAre("/opt/podman/bin/podman", "--storage-driver=overlay"));
  EXPECT_EQ(runtime->description, "podman 5.0.1 (crun, systemd, cgroup v2)");
}

TEST(ContainerRuntimeTest, DockerInfoAndBrokenInfo) {
  ContainerRuntimeOptions options;
  options.kind = RuntimeKind::kDocker;
  Result<ContainerRuntime> runtime = RuntimeFromFacts(options, Facts(kDockerInfo));
  ASSERT_TRUE(runtime.ok());
  EXPECT_THAT(runtime->command, ElementsAre("docker"));
  EXPECT_EQ(runtime->description, "docker 24.0.7 (runc, systemd, cgroup v2)");
  EXPECT_FALSE(RuntimeFromFacts(options, Facts("Cannot connect to the Docker daemon")).ok());
  options.kind.reset();
  EXPECT_FALSE(RuntimeFromFacts(options, Facts(kDockerInfo)).ok());
}

protocol::TaskLaunch Launch() {
  protocol::TaskLaunch launch;
  launch.command = {"python", "train.py"};
  launch.workdir = "/data/run1";
  launch.limits = {core::MilliCpu(1500), core::MemoryMiB(2048)};
  protocol::Container& container = launch.container.emplace();
  container.image = "nvcr.io/nvidia/pytorch:24.01-py3";
  container.mounts = {{"/data", "/data", true}, {"/home/alice", "/home/alice", false}};
  container.env = {{"NCCL_DEBUG", "INFO"}};
  return launch;
}

ContainerTask Task() {
  ContainerTask task;
  task.key = TaskKey{core::JobId{42}, 1, 3};
  task.node = "gpu-07";
  task.state_dir = "/var/lib/berth";
  task.uid = 1001;
  task.gid = 1001;
  task.groups = {1001, 27, 44};
  task.gpus = {4, 5};
  task.cdi_gpus = true;
  task.env_file = "/var/lib/berth/tasks/42-1-3/container.env";
  task.scratch_dir = "/var/lib/berth/tasks/42-1-3/work";
  task.pids_max = 32768;
  return task;
}

TEST(ContainerRuntimeTest, PodmanRunArgvGivesTheContainerWhatATrainingJobNeeds) {
  Result<ContainerRuntime> runtime = RuntimeFromFacts({}, Facts(kPodmanV1Info));
  ASSERT_TRUE(runtime.ok());
  const std::vector<std::string> argv = ContainerRunArgv(*runtime, Launch(), Task());
  ASSERT_GE(argv.size(), 4u);
  EXPECT_EQ(argv[0], "podman");
  EXPECT_EQ(argv[1], "run");
  EXPECT_EQ(After(argv, "--name"), ContainerName(Task()));
  EXPECT_THAT(ContainerName(Task()), HasSubstr("berth-gpu-07-42-1-3-"));
  EXPECT_THAT(
      argv, IsSupersetOf({"berth.job=42", "berth.task=1", "berth.attempt=3", "berth.node=gpu-07"}));
  EXPECT_EQ(After(argv, "--user"), "1001:1001");
  EXPECT_EQ(Count(argv, "--group-add"), 2u);  // 27 and 44; the primary group is the gid
  EXPECT_THAT(argv, IsSupersetOf({"27", "44"}));
  EXPECT_EQ(After(argv, "--network"), "host");
  EXPECT_EQ(After(argv, "--shm-size"), "8g");
  EXPECT_EQ(After(argv, "--memory"), "2048m");
  EXPECT_EQ(After(argv, "--cpus"), "1.500");
  EXPECT_EQ(After(argv, "--pids-limit"), "32768");
  EXPECT_EQ(After(argv, "--pull"), "never");  // the supervisor pulled already
  EXPECT_EQ(After(argv, "--ulimit"), "nofile=20000:20000");
  EXPECT_THAT(argv, IsSupersetOf({"nvidia.com/gpu=4", "nvidia.com/gpu=5"}));
  EXPECT_EQ(After(argv, "--env-file"), Task().env_file);
  EXPECT_THAT(argv,
              IsSupersetOf(std::vector<std::string>{
                  "type=bind,source=/data,target=/data,ro",
                  "type=bind,source=/home/alice,target=/home/alice",
                  "type=bind,source=/data/run1,target=/data/run1",
                  "type=bind,source=" + Task().scratch_dir + ",target=" + Task().scratch_dir}));
  EXPECT_EQ(After(argv, "--workdir"), "/data/run1");
  // Options, then the image, then the command.
  EXPECT_THAT(std::vector<std::string>(argv.end() - 3, argv.end()),
              ElementsAre("nvcr.io/nvidia/pytorch:24.01-py3", "python", "train.py"));
  // No secrets on the command line: the environment is in the file.
  EXPECT_THAT(argv, Not(Contains("NCCL_DEBUG=INFO")));
}

TEST(ContainerRuntimeTest, EntrypointScriptAndSimulatedGpus) {
  Result<ContainerRuntime> runtime = RuntimeFromFacts({}, Facts(kPodmanV1Info));
  ASSERT_TRUE(runtime.ok());
  protocol::TaskLaunch launch = Launch();
  launch.command.clear();
  launch.script = "echo hi\n";
  launch.container->entrypoint = {"/usr/bin/env", "-i"};
  launch.container->workdir = "/workspace";
  ContainerTask task = Task();
  task.cdi_gpus = false;
  task.script_path = "/var/lib/berth/tasks/42-1-3/script";
  const std::vector<std::string> argv = ContainerRunArgv(*runtime, launch, task);
  EXPECT_THAT(argv, Not(Contains("--device")));
  EXPECT_EQ(After(argv, "--entrypoint"), "/usr/bin/env");
  EXPECT_EQ(After(argv, "--workdir"), "/workspace");
  EXPECT_THAT(argv, Contains("type=bind,source=" + task.script_path + ",target=/berth/script,ro"));
  EXPECT_THAT(std::vector<std::string>(argv.end() - 4, argv.end()),
              ElementsAre(launch.container->image, "-i", "/bin/sh", "/berth/script"));
}

TEST(ContainerRuntimeTest, DockerRunArgvHasTheSameShape) {
  ContainerRuntimeOptions options;
  options.kind = RuntimeKind::kDocker;
  options.shm_size = "16g";
  Result<ContainerRuntime> runtime = RuntimeFromFacts(options, Facts(kDockerInfo));
  ASSERT_TRUE(runtime.ok());
  const std::vector<std::string> argv = ContainerRunArgv(*runtime, Launch(), Task());
  EXPECT_THAT(std::vector<std::string>(argv.begin(), argv.begin() + 2),
              ElementsAre("docker", "run"));
  EXPECT_EQ(After(argv, "--shm-size"), "16g");
  EXPECT_EQ(After(argv, "--user"), "1001:1001");
  EXPECT_THAT(argv, Contains("nvidia.com/gpu=4"));
  const ContainerSpec spec = ContainerSpecFor(*runtime, Launch(), Task());
  EXPECT_EQ(spec.kind, "docker");
  EXPECT_EQ(spec.pull, "missing");  // the node's default
  EXPECT_EQ(spec.memory_mib, 2048);
  protocol::TaskLaunch always = Launch();
  always.container->pull = protocol::ImagePull::kAlways;
  EXPECT_EQ(ContainerSpecFor(*runtime, always, Task()).pull, "always");
}

TEST(ContainerRuntimeTest, EnvironmentDropsTheHostsAndRenumbersCdiGpus) {
  const std::map<std::string, std::string> host = {{"PATH", "/usr/bin"},
                                                   {"HOME", "/home/alice"},
                                                   {"LC_ALL", "C"},
                                                   {"USER", "alice"},
                                                   {"CUDA_VISIBLE_DEVICES", "4,5"},
                                                   {"BERTH_GPUS", "4,5"},
                                                   {"NVIDIA_VISIBLE_DEVICES", "4,5"},
                                                   {"MASTER_ADDR", "10.0.0.1"}};
  std::map<std::string, std::string> env = ContainerEnvironment(host, *Launch().container, Task());
  EXPECT_FALSE(env.contains("PATH"));
  EXPECT_FALSE(env.contains("HOME"));
  EXPECT_FALSE(env.contains("LC_ALL"));
  EXPECT_FALSE(env.contains("NVIDIA_VISIBLE_DEVICES"));
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "0,1");
  EXPECT_EQ(env["BERTH_GPUS"], "4,5");
  EXPECT_EQ(env["MASTER_ADDR"], "10.0.0.1");
  EXPECT_EQ(env["NCCL_DEBUG"], "INFO");
  EXPECT_EQ(env["USER"], "alice");
  ContainerTask simulated = Task();
  simulated.cdi_gpus = false;
  env = ContainerEnvironment(host, *Launch().container, simulated);
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "4,5");
  EXPECT_EQ(env["NVIDIA_VISIBLE_DEVICES"], "4,5");

  const EnvFile file = ContainerEnvFile({{"A", "1"}, {"B", "two\nlines"}});
  EXPECT_EQ(file.text, "A=1\n");
  EXPECT_THAT(file.argv_env, ElementsAre("B=two\nlines"));
}

}  // namespace
}  // namespace berth::agent
