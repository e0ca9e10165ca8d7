// Records for the store tests: a job with every field set, a node, a token,
// team queues.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/node.h"
#include "core/quota.h"
#include "store/records.h"

namespace berth::store::testing_records {

// A job that uses every field of JobRecord and JobRequest, so a round trip
// that drops one fails.
inline JobRecord FullJob() {
  JobRecord job;
  job.id = core::JobId(41);
  job.user = "alice";
  JobRequest& request = job.request;
  request.name = "train-resnet";
  request.command = {"python", "train.py", "--epochs", "90", "quote\"and\\slash"};
  request.tasks = 4;
  request.task = core::TaskShape{core::WholeGpus(2), core::Cores(8), core::MemoryMiB(65536)};
  request.task_shapes = {request.task,
                         {core::WholeGpus(1), core::Cores(4), core::MemoryMiB(32768)},
                         {core::WholeGpus(1), core::Cores(4), core::MemoryMiB(32768)},
                         {core::WholeGpus(1), core::Cores(4), core::MemoryMiB(32768)}};
  request.gpu_types = {"H100-80GB", "A100-80GB"};
  request.constraint = "ib&(nvlink|!spot)";
  request.nodelist = {"gpu01", "gpu02"};
  request.exclude = {"gpu02"};
  request.wait_for_nodes = true;
  request.gpus_in_one_group = true;
  request.distinct_nodes = true;
  request.slurm_tasks_per_node = {2, 1, 1, 1};
  request.default_memory_per_cpu = true;
  request.priority = 3;
  request.queue = "vision";
  request.time_limit = core::Duration::Hours(12);
  request.estimate = core::Duration::Hours(3);
  request.preemptible = true;
  request.grace = core::Duration::Seconds(90);
  request.depends_on = {{DependencyKind::kAfterOk, core::JobId(3)},
                        {DependencyKind::kAfterNotOk, core::JobId(5)}};
  request.env = {{"CUDA_LAUNCH_BLOCKING", "1"}, {"WANDB_PROJECT", "berth"}};
  request.workdir = "/home/alice/resnet";
  request.output = "%x-%j.out";
  request.error = "%x-%j.err";
  request.append_output = true;
  request.retries = 2;
  request.requeue = false;
  request.hold = true;
  request.array_index = 6;
  request.array_max_running = 3;
  request.singleton = true;
  request.container = ContainerRequest{"localhost/train:1",
                                       {{"/data", "/data", true}, {"/home/a", "/home/a", false}},
                                       "/workspace",
                                       {{"NCCL_DEBUG", "INFO"}},
                                       {"/bin/sh", "-c"},
                                       true,
                                       "never"};
  request.signal = EarlySignalRequest{"USR1", core::Duration::Seconds(90), true};
  job.array_parent = core::JobId(35);
  job.state = core::JobState::kRunning;
  job.reason = core::JobReason::kPreempted;
  job.message = "running on 2 nodes";
  job.submit_time = core::Time::FromSeconds(1'700'000'000) + core::Duration::Micros(123);
  job.start_time = core::Time::FromSeconds(1'700'000'100);
  job.end_time = core::Time::FromSeconds(1'700'000'200);
  job.placement = {{"gpu-01", {0, 1}}, {"gpu-02", {6, 7}}};
  job.exit_code = 137;
  job.signal = 9;
  job.attempts = 2;
  job.preemptions = 1;
  job.last_checkpoint = core::Time::FromSeconds(1'700'000'150) + core::Duration::Micros(7);
  job.first_eta = FirstEtaRecord{core::Time::FromSeconds(1'700'000'001),
                                 core::Time::FromSeconds(1'700'000'050),
                                 core::Time::FromSeconds(1'700'000'080) + core::Duration::Micros(3),
                                 core::Time::FromSeconds(1'700'000'040),
                                 core::Time::FromSeconds(1'700'000'160),
                                 core::Time::FromSeconds(1'700'000'100)};
  StepRecord step;
  step.id = 1;
  step.attempt = 2;
  step.command = {"python3", "train.py"};
  step.env = {{"LR", "0.1"}};
  step.nodes = {"gpu-01", "gpu-02"};
  step.tasks = {StepTaskRecord{0, 0, "gpu-01", 0, 0, 0, std::nullopt},
                StepTaskRecord{1, 1, "gpu-02", 1, 0, std::nullopt, 15},
                StepTaskRecord{2, 1, "gpu-02", 1, 1, std::nullopt, std::nullopt}};
  step.cancelled = true;
  step.start_time = core::Time::FromSeconds(1'700'000'120) + core::Duration::Micros(5);
  step.end_time = core::Time::FromSeconds(1'700'000'130);
  job.steps = {StepRecord{}, step};
  job.signals = {SignalRecord{}, SignalRecord{1'700'000'160'000'000, "USR1", true}};
  job.version = 5;
  return job;
}

inline NodeRecord Node(const std::string& name, core::NodeState state) {
  NodeRecord node;
  node.name = name;
  node.address = "127.0.0.1:7701";
  node.spec =
      core::MakeNodeSpec(name, "H100-80GB", 4, core::Cores(64), core::MemoryMiB(512 * 1024));
  node.spec.gpus[1].health = core::GpuHealth::kUnhealthy;
  node.spec.gpus[2].interconnect_group = 1;
  node.spec.gpus[3].interconnect_group = 1;
  node.spec.labels = {{"zone", "a"}, {"rack", "r12"}};
  node.spec.features = {"ib", "nvlink"};
  node.spec.container_runtime = "podman 4.3.1 (runc, cgroupfs, cgroup v1)";
  node.state = state;
  node.drained = state == core::NodeState::kDraining;
  node.last_heartbeat = core::Time::FromSeconds(1'700'000'300);
  return node;
}

inline TokenRecord Token(const std::string& id, const std::string& hash, Role role) {
  TokenRecord token;
  token.id = id;
  token.hash = hash;
  token.user = role == Role::kAgent ? "agent:" + id : "alice";
  token.role = role;
  token.node = role == Role::kAgent ? "gpu-01" : "";
  token.created = core::Time::FromSeconds(1'700'000'000);
  return token;
}

inline core::QueueSpec Queue(std::string name, std::string parent, int64_t guaranteed,
                             std::optional<int64_t> ceiling = std::nullopt) {
  core::QueueSpec queue;
  queue.name = std::move(name);
  queue.parent = std::move(parent);
  queue.guaranteed = core::WholeGpus(guaranteed);
  if (ceiling) queue.ceiling = core::WholeGpus(*ceiling);
  return queue;
}

// One queue sets every governance key (issue 27).
inline std::vector<core::QueueSpec> SomeQueues() {
  core::QueueSpec detection = Queue("detection", "vision", 64);
  detection.shares = 3;
  detection.max_gpus_per_user = core::MilliGpu(8500);
  detection.max_running_jobs_per_user = 4;
  detection.max_priority = 100;
  detection.max_time = core::Duration::Hours(24);
  detection.allow_users = {"alice", "bob"};
  detection.allow_groups = {"cv-team"};
  detection.is_default = true;
  detection.default_memory.per_gpu = core::MemoryMiB(32768);
  detection.default_memory.per_cpu = core::MemoryMiB(4096);
  return {Queue("vision", "", 128, 256), detection, Queue("nlp", "", 256)};
}

}  // namespace berth::store::testing_records
