#include "agent/agent.h"

#include <fcntl.h>
#include <httplib.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "agent/node_lease.h"
#include "agent/task_env.h"
#include "common/listen_address.h"
#include "follow/leader_follower.h"
#include "protocol/desired_json.h"
#include "protocol/report_json.h"
#include "protocol/seconds_json.h"

extern char** environ;

namespace berth::agent {
namespace {

using nlohmann::json;

core::MilliCpu NodeCpu() {
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  return core::MilliCpu(cpus > 0 ? cpus * 1000 : 0);
}

core::MemoryMiB NodeMemory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return core::MemoryMiB(0);
  return core::MemoryMiB(static_cast<int64_t>(pages) * page_size / (1024 * 1024));
}

// The server's error message, else the body, else why no server answered.
std::string Describe(const Result<httplib::Response>& result) {
  if (!result.ok()) return result.status().message();
  const json body = json::parse(result->body, nullptr, false);
  std::string message = result->body;
  if (body.is_object() && body.contains("error") && body["error"].is_object()) {
    message = body["error"].value("message", result->body);
  }
  return "HTTP " + std::to_string(result->status) + ": " + message;
}

// Each GPU's device numbers, for denying it to the tasks that were not
// given it. A GPU whose device file is missing goes unfenced, said once.
std::map<int32_t, DeviceNumber> GpuDevices(const std::string& node, const GpuInventoryInfo& info) {
  std::map<int32_t, DeviceNumber> devices;
  for (const GpuInfo& gpu : info.gpus) {
    if (gpu.device_path.empty()) continue;
    struct stat file {};
    const bool found = ::stat(gpu.device_path.c_str(), &file) == 0;
    if (!found || !S_ISCHR(file.st_mode)) {
      spdlog::warn("agent {}: GPU {}: {} is not a character device ({}); other tasks can use it",
                   node, gpu.index, gpu.device_path,
                   found ? "another kind of file" : std::strerror(errno));
      continue;
    }
    devices[gpu.index] = DeviceNumber{major(file.st_rdev), minor(file.st_rdev)};
  }
  return devices;
}

// Where tasks get their cgroups, or none: said once, here, and in the node's
// `cgroups` label.
Result<std::optional<TaskCgroupConfig>> TaskCgroups(const AgentOptions& options,
                                                    const GpuInventoryInfo& info) {
  if (options.cgroups == CgroupMode::kOff) {
    spdlog::warn("agent {}: --cgroups off: tasks run without memory, CPU, pids or device limits",
                 options.node);
    return std::optional<TaskCgroupConfig>();
  }
  Result<CgroupDirs> parent = SetUpTaskCgroups(options.state_dir);
  if (!parent.ok()) {
    if (options.cgroups == CgroupMode::kRequired) {
      return FailedPrecondition("--cgroups required: " + parent.status().message());
    }
    spdlog::warn(
        "agent {}: cannot give tasks cgroups ({}); tasks run without memory, CPU, pids or device "
        "limits (--cgroups required refuses to start instead)",
        options.node, parent.status().message());
    return std::optional<TaskCgroupConfig>();
  }
  TaskCgroupConfig config;
  config.parent = std::move(*parent);
  config.pids_max = options.task_pids_max;
  config.gpu_devices = GpuDevices(options.node, info);
  std::string where;
  for (const std::string& dir :
       TaskCgroup{config.parent.version, config.parent.dirs, 0, 0, 0, {}}.Directories()) {
    where += (where.empty() ? "" : ", ") + dir;
  }
  spdlog::info("agent {}: tasks run in cgroups (v{}) under {}", options.node,
               config.parent.version == CgroupVersion::kV1 ? 1 : 2, where);
  return std::optional<TaskCgroupConfig>(std::move(config));
}

// The container runtime, when it works here; said once, either way.
std::optional<ContainerRuntime> ContainerRuntimeOf(const AgentOptions& options) {
  if (!options.containers.kind) {
    spdlog::info("agent {}: containers off: jobs in an image do not run here", options.node);
    return std::nullopt;
  }
  Result<ContainerRuntime> runtime = DetectContainerRuntime(options.containers);
  if (!runtime.ok()) {
    spdlog::warn("agent {}: no container runtime ({}); jobs in an image do not run here",
                 options.node, runtime.status().message());
    return std::nullopt;
  }
  std::string command;
  for (const std::string& arg : runtime->command) command += (command.empty() ? "" : " ") + arg;
  spdlog::info("agent {}: containers run with {}: {}", options.node, runtime->description, command);
  return std::move(*runtime);
}

}  // namespace

Result<std::unique_ptr<Agent>> Agent::Start(AgentOptions options,
                                            std::unique_ptr<GpuInventory> inventory,
                                            const Clock& clock) {
  if (options.node.empty()) return InvalidArgument("--node: required");
  if (options.server_url.empty()) return InvalidArgument("--server: required");
  BERTH_ASSIGN_OR_RETURN(std::vector<std::string> servers,
                         follow::ParseServerList(options.server_url, "--server"));
  if (options.state_dir.empty()) return InvalidArgument("--state-dir: required");
  if (options.supervisor_command.empty()) {
    return InvalidArgument("supervisor_command: required (the binary that runs supervise-task)");
  }
  BERTH_ASSIGN_OR_RETURN(auto listen, ParseListen(options.listen, "--listen"));
  if (options.advertise.empty() && (listen.first == "0.0.0.0" || listen.first.empty())) {
    return InvalidArgument("--advertise: required when --listen is " + options.listen +
                           " (the server must know one address that reaches this node)");
  }
  std::unique_ptr<Agent> agent(new Agent(std::move(options), clock));
  const AgentOptions& o = agent->options_;
  follow::FollowOptions follow;
  // The loop retries, with its own backoff: each request tries each server
  // once, and never waits, so Stop() is never held up.
  follow.patience = std::chrono::milliseconds(0);
  follow.configure = [&o](httplib::Client& client) {
    client.set_keep_alive(true);
    client.set_connection_timeout(2, 0);
    client.set_read_timeout(10, 0);
    client.set_bearer_token_auth(o.token);
    client.set_tcp_nodelay(true);  // a heartbeat's body goes out without waiting for an ACK
#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
    if (!o.ca_file.empty()) client.set_ca_cert_path(o.ca_file.c_str());
#endif
  };
  agent->server_ = std::make_unique<follow::LeaderFollower>(std::move(servers), std::move(follow));

  std::error_code error;
  std::filesystem::create_directories(o.state_dir, error);
  if (error)
    return Unavailable("--state-dir: cannot create " + o.state_dir + ": " + error.message());
  // One agent per state dir: two would start every task twice.
  Result<LockFile> lock =
      LockFile::Take(o.state_dir + "/agent.lock", "berth agent pid " + std::to_string(::getpid()) +
                                                      " for node " + o.node + "\n");
  if (lock.status().code() == StatusCode::kFailedPrecondition) {
    return FailedPrecondition("--state-dir: " + o.state_dir + " is in use by another agent (" +
                              lock.status().message() + ")");
  }
  BERTH_RETURN_IF_ERROR(lock.status());
  agent->state_dir_lock_ = std::move(*lock);

  agent->inventory_ = std::move(inventory);
  BERTH_ASSIGN_OR_RETURN(agent->inventory_info_, agent->inventory_->Discover());
  spdlog::info("agent {}: {} GPUs ({}), {}", o.node, agent->inventory_info_.gpus.size(),
               agent->inventory_info_.gpu_type.empty() ? "none" : agent->inventory_info_.gpu_type,
               agent->inventory_info_.driver);
  for (const GpuInfo& gpu : agent->inventory_info_.gpus) {
    spdlog::info("agent {}: GPU {} {} {} {} MiB group {}{}", o.node, gpu.index, gpu.uuid, gpu.name,
                 gpu.memory_mib, gpu.interconnect_group, gpu.healthy ? "" : " UNHEALTHY");
  }
  if (Result<std::vector<GpuSample>> samples = agent->inventory_->Sample(); samples.ok()) {
    agent->last_samples_ = std::move(*samples);
  }

  TaskRunnerOptions runner;
  runner.state_dir = o.state_dir;
  runner.node = o.node;
  runner.supervisor_command = o.supervisor_command;
  runner.base_env = PassThroughEnvironment(environ);
  BERTH_ASSIGN_OR_RETURN(runner.cgroups, TaskCgroups(o, agent->inventory_info_));
  if (runner.cgroups) agent->task_cgroup_parent_ = runner.cgroups->parent;
  agent->cgroups_version_ = !runner.cgroups                                        ? "off"
                            : runner.cgroups->parent.version == CgroupVersion::kV1 ? "v1"
                                                                                   : "v2";
  runner.allow_root_jobs = o.allow_root_jobs;
  runner.containers = ContainerRuntimeOf(o);
  // Real GPUs (NVML's, not simulated ones) go to containers through CDI.
  runner.cdi_gpus = !agent->inventory_info_.gpus.empty() && agent->inventory_info_.driver != "fake";
  runner.pids_max = o.task_pids_max;
  if (runner.containers) agent->container_runtime_ = runner.containers->description;
  const std::optional<ContainerRuntime> containers = runner.containers;
  BERTH_ASSIGN_OR_RETURN(agent->runner_, TaskRunner::Open(std::move(runner)));
  if (containers) {
    // Containers of tasks no supervisor owns any more (a crash, a reboot).
    for (const std::string& name : RemoveLeftoverContainers(
             *containers, o.state_dir, agent->runner_->RunningContainerNames())) {
      spdlog::warn("agent {}: removed leftover container {}", o.node, name);
    }
  }
  // A restarted agent holds the lease its predecessor renewed: its tasks
  // run on until it ends, and it is renewed long before if the server is
  // there.
  agent->lease_end_ = ReadLeaseEnd(LeasePath(o.state_dir));
  for (const LocalTask& task : agent->runner_->Tasks()) {
    spdlog::info("agent {}: adopted {} ({})", o.node, ToString(task.key),
                 task.phase == LocalPhase::kRunning ? "running" : "exited");
  }

  BERTH_ASSIGN_OR_RETURN(agent->wakeup_, Wakeup::Create());
  agent->wakeup_->WatchTaskDirs(agent->runner_->RunningTaskDirs());
  BERTH_ASSIGN_OR_RETURN(agent->logs_key_, RandomSecret());
  AgentHttp::Options http;
  http.host = listen.first;
  http.port = listen.second;
  http.tasks_dir = agent->runner_->tasks_dir();
  http.logs_key = agent->logs_key_;
  http.metrics = [a = agent.get()] { return a->MetricsText(); };
  http.wake = [a = agent.get()] { a->wakeup_->Notify(); };
  BERTH_ASSIGN_OR_RETURN(agent->http_, AgentHttp::Start(std::move(http)));
  agent->address_ =
      o.advertise.empty() ? listen.first + ":" + std::to_string(agent->http_->port()) : o.advertise;
  spdlog::info("agent {}: serving logs on {}", o.node, agent->address_);
  agent->thread_ = std::thread([a = agent.get()] { a->Loop(); });
  return agent;
}

Agent::Agent(AgentOptions options, const Clock& clock)
    : options_(std::move(options)), clock_(clock) {}

Agent::~Agent() { Stop(); }

void Agent::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  if (wakeup_) wakeup_->Notify();
  if (thread_.joinable()) thread_.join();
  if (options_.stop_tasks_on_exit && runner_) {
    StopAllTasks();
    // Its tasks are gone: so goes their parent cgroup (berth dev leaves none
    // behind). Without stopping them, it stays for the next agent.
    if (task_cgroup_parent_) RemoveTaskParentIfEmpty(*task_cgroup_parent_);
  }
  if (http_) http_->Stop();
}

// Asks every running task to stop and waits (bounded) for them: the
// supervisors escalate to SIGKILL on their own, so an agent that gives up
// waiting still leaves nothing running for long.
void Agent::StopAllTasks() {
  runner_->Refresh();
  for (const LocalTask& task : runner_->Tasks()) {
    if (task.phase != LocalPhase::kRunning) continue;
    spdlog::info("agent {}: stopping {} before exiting", options_.node, ToString(task.key));
    if (Status status = runner_->Stop(task.key, options_.exit_grace); !status.ok()) {
      spdlog::error("agent {}: {}", options_.node, status.ToString());
    }
  }
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::microseconds(options_.exit_grace.micros()) +
                        std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < deadline) {
    runner_->Refresh();
    bool running = false;
    for (const LocalTask& task : runner_->Tasks()) running |= task.phase == LocalPhase::kRunning;
    if (!running) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

AgentStats Agent::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

bool Agent::Stopping() const {
  std::lock_guard lock(mutex_);
  return stopping_;
}

void Agent::Sleep(std::chrono::milliseconds delay, bool early) {
  const auto deadline = std::chrono::steady_clock::now() + delay;
  while (!Stopping()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return;
    if (wakeup_->Wait(left) && early) return;
  }
}

void Agent::Loop() {
  std::minstd_rand jitter(static_cast<unsigned>(::getpid()));
  std::chrono::milliseconds backoff{0};
  while (!Stopping()) {
    FenceIfLeaseEnded();
    RoundResult result = registered_ ? Round() : (Register() ? Round() : RoundResult::kFailed);
    if (result == RoundResult::kOk) {
      backoff = std::chrono::milliseconds(0);
      // Renewed in time whatever the interval: with half the lease left
      // at the latest (node_lease.h).
      Sleep(UntilRenewal(options_.heartbeat_interval), /*early=*/true);
      continue;
    }
    if (result == RoundResult::kRegisterAgain) continue;  // at once
    // Unreachable or refused: back off, exponentially and capped, with some
    // jitter so a fleet of agents does not come back in lockstep.
    backoff = backoff.count() == 0 ? options_.heartbeat_interval
                                   : std::min(backoff * 2, options_.max_backoff);
    const auto spread = std::chrono::milliseconds(
        static_cast<int64_t>(jitter() % static_cast<uint64_t>(backoff.count() / 4 + 1)));
    Sleep(UntilLeaseEnd(backoff + spread), /*early=*/false);
  }
}

void Agent::RenewLease(std::chrono::steady_clock::time_point sent,
                       std::optional<core::Duration> lease) {
  const std::string path = LeasePath(options_.state_dir);
  if (!lease) {
    lease_end_.reset();
    if (Status removed = RemoveLease(path); !removed.ok()) {
      spdlog::warn("agent {}: {}", options_.node, removed.ToString());
    }
    return;
  }
  const auto end = sent + std::chrono::microseconds(lease->micros());
  if (Status written = WriteLeaseEnd(path, end); !written.ok()) {
    // The supervisors keep the older end, and stop their tasks sooner.
    spdlog::error("agent {}: cannot record the node lease: {}", options_.node, written.ToString());
  }
  lease_end_ = end;
}

void Agent::FenceIfLeaseEnded() {
  const auto now = std::chrono::steady_clock::now();
  if (!lease_end_ || now < *lease_end_) return;
  const core::Duration grace = core::Duration::Micros(
      std::chrono::duration_cast<std::chrono::microseconds>(kLeaseStopGrace).count());
  runner_->Refresh();
  for (const LocalTask& task : runner_->Tasks()) {
    if (task.phase != LocalPhase::kRunning) continue;
    if (task.stop_grace && *task.stop_grace <= grace) continue;  // asked already
    spdlog::warn(
        "agent {}: the node lease ended {} ms ago without renewal (the server may run its jobs "
        "elsewhere): stopping {}",
        options_.node,
        std::chrono::duration_cast<std::chrono::milliseconds>(now - *lease_end_).count(),
        ToString(task.key));
    if (Status status = runner_->Stop(task.key, grace); !status.ok()) {
      spdlog::error("agent {}: cannot stop {}: {}", options_.node, ToString(task.key),
                    status.ToString());
    }
    std::lock_guard lock(mutex_);
    ++stats_.tasks_fenced;
  }
}

std::chrono::milliseconds Agent::UntilRenewal(std::chrono::milliseconds delay) const {
  if (!lease_end_) return delay;
  const auto half_left = std::chrono::duration_cast<std::chrono::milliseconds>(
      (*lease_end_ - std::chrono::steady_clock::now()) / 2);
  // Not more often than every 100 ms, even for a lease granted short.
  return std::min(delay, std::max(half_left, std::chrono::milliseconds(100)));
}

std::chrono::milliseconds Agent::UntilLeaseEnd(std::chrono::milliseconds delay) const {
  if (!lease_end_) return delay;
  const auto left =
      std::chrono::ceil<std::chrono::milliseconds>(*lease_end_ - std::chrono::steady_clock::now());
  if (left.count() < 0) return delay;  // ended: acted on already
  return std::min(delay, left + std::chrono::milliseconds(1));
}

Result<httplib::Response> Agent::PostToServer(const std::string& path, const std::string& body) {
  // A heartbeat or a registration sent twice does what one does: safe to
  // send again after a lost connection.
  return server_->Request(
      [&](httplib::Client& client) { return client.Post(path, body, "application/json"); },
      follow::Replay::kSafe);
}

bool Agent::Register() {
  protocol::NodeRegistration registration;
  registration.node = options_.node;
  registration.address = address_;
  registration.logs_key = logs_key_;
  registration.gpu_type = inventory_info_.gpu_type;
  registration.cpu = NodeCpu();
  registration.memory = NodeMemory();
  registration.labels = options_.labels;
  registration.features = options_.features;
  registration.container_runtime = container_runtime_;
  for (const GpuInfo& gpu : inventory_info_.gpus) {
    bool healthy = gpu.healthy;
    for (const GpuSample& sample : last_samples_) {
      if (sample.index == gpu.index) healthy = sample.healthy;
    }
    registration.gpus.push_back(protocol::GpuReport{gpu.index, gpu.interconnect_group, healthy});
  }
  // The lease counts from before the request left (node_lease.h).
  const auto sent = std::chrono::steady_clock::now();
  Result<httplib::Response> result =
      PostToServer("/api/v1/agent/register", protocol::RegistrationJson(registration).dump());
  Result<std::optional<core::Duration>> lease = Unavailable(Describe(result));
  if (result.ok() && result->status == 200) {
    const json body = json::parse(result->body, nullptr, false);
    JsonFields fields(body, "");
    lease = body.is_object() ? protocol::ReadSeconds(fields, "lease_s")
                             : Result<std::optional<core::Duration>>(
                                   InvalidArgument("the answer is not a JSON object"));
  }
  if (lease.ok()) RenewLease(sent, *lease);
  std::lock_guard lock(mutex_);
  if (!lease.ok()) {
    ++stats_.heartbeats_failed;
    spdlog::warn("agent {}: cannot register with {}: {}", options_.node, server_->current(),
                 lease.status().message());
    return false;
  }
  registered_ = true;
  ++stats_.registrations;
  spdlog::info("agent {}: registered with {} as {}", options_.node, server_->current(), address_);
  return true;
}

Agent::RoundResult Agent::Round() {
  runner_->Refresh();
  const std::vector<LocalTask> tasks = runner_->Tasks();
  std::vector<GpuSample> samples;
  if (Result<std::vector<GpuSample>> sampled = inventory_->Sample(); sampled.ok()) {
    samples = std::move(*sampled);
  } else {
    // Without a sample the heartbeat says nothing of health: unchanged.
    spdlog::warn("agent {}: GPU sample failed: {}", options_.node, sampled.status().ToString());
  }
  int64_t running = 0;
  for (const LocalTask& task : tasks) running += task.phase == LocalPhase::kRunning ? 1 : 0;
  {
    std::lock_guard lock(mutex_);
    if (!samples.empty()) last_samples_ = samples;
    tasks_running_ = running;
  }
  protocol::Heartbeat heartbeat = BuildHeartbeat(options_.node, tasks, inventory_info_, samples);
  heartbeat.steps = runner_->StepExits();
  const auto sent = std::chrono::steady_clock::now();  // the lease counts from here
  Result<httplib::Response> result =
      PostToServer("/api/v1/agent/heartbeat", protocol::HeartbeatJson(heartbeat).dump());
  if (result.ok() && result->status == 404) {
    // The server does not know this node (a new database, or it was
    // removed): register again, at once.
    spdlog::warn("agent {}: {}; registering again", options_.node, Describe(result));
    registered_ = false;
    return RoundResult::kRegisterAgain;
  }
  const json body =
      result.ok() && result->status == 200 ? json::parse(result->body, nullptr, false) : json();
  Result<protocol::DesiredState> desired =
      body.is_object() ? protocol::ParseDesired(body)
                       : Result<protocol::DesiredState>(Unavailable(Describe(result)));
  if (!desired.ok()) {
    std::lock_guard lock(mutex_);
    ++stats_.heartbeats_failed;
    spdlog::warn("agent {}: heartbeat to {} failed: {}", options_.node, server_->current(),
                 desired.status().message());
    return RoundResult::kFailed;
  }
  RenewLease(sent, desired->lease);
  {
    std::lock_guard lock(mutex_);
    ++stats_.heartbeats_ok;
  }
  const ReconcilePlan plan = Reconcile(*desired, tasks);
  Apply(plan);
  for (const protocol::TaskAssignment& task : desired->run) {
    const TaskKey key{task.job, task.task, task.attempt};
    if (!task.signals.empty()) {
      if (Status status = runner_->Signal(key, task.signals); !status.ok()) {
        spdlog::warn("agent {}: cannot signal {}: {}", options_.node, ToString(key),
                     status.ToString());
      }
    }
    if (!task.steps.empty()) {
      if (Status status = runner_->DeliverSteps(key, task.steps); !status.ok()) {
        spdlog::warn("agent {}: steps of {}: {}", options_.node, ToString(key), status.ToString());
      }
    }
  }
  // The server shows a job as running once its agent reports the task:
  // report new tasks now rather than at the next heartbeat.
  if (!plan.start.empty()) wakeup_->Notify();
  for (const TaskKey& key : AcknowledgedExits(heartbeat, *desired)) {
    if (Status status = runner_->MarkAcked(key); !status.ok()) {
      spdlog::warn("agent {}: {}", options_.node, status.ToString());
    }
  }
  wakeup_->WatchTaskDirs(runner_->RunningTaskDirs());
  if (int removed = runner_->Collect(clock_.Now() - options_.keep_finished); removed > 0) {
    spdlog::info("agent {}: removed {} finished tasks older than {} s", options_.node, removed,
                 options_.keep_finished.micros() / 1'000'000);
  }
  return RoundResult::kOk;
}

void Agent::Apply(const ReconcilePlan& plan) {
  for (const protocol::TaskStop& stop : plan.stop) {
    const TaskKey key{stop.job, stop.task, stop.attempt};
    spdlog::info("agent {}: stopping {} (grace {} ms)", options_.node, ToString(key),
                 stop.grace.micros() / 1000);
    if (Status status = runner_->Stop(key, stop.grace); !status.ok()) {
      spdlog::error("agent {}: cannot stop {}: {}", options_.node, ToString(key),
                    status.ToString());
    }
    std::lock_guard lock(mutex_);
    ++stats_.tasks_stopped;
  }
  for (const protocol::TaskAssignment& task : plan.start) {
    const TaskKey key{task.job, task.task, task.attempt};
    spdlog::info("agent {}: starting {} on GPUs [{}]", options_.node, ToString(key),
                 JoinIndices(task.gpus));
    if (Status status = runner_->Start(task); !status.ok()) {
      // Recorded as the task's outcome; the next heartbeat reports it.
      spdlog::error("agent {}: cannot start {}: {}", options_.node, ToString(key),
                    status.ToString());
    }
    std::lock_guard lock(mutex_);
    ++stats_.tasks_started;
  }
}

std::string Agent::MetricsText() {
  std::lock_guard lock(mutex_);
  std::ostringstream out;
  const auto gauge = [&out](const std::string& name, const std::string& help) {
    out << "# HELP " << name << " " << help << "\n# TYPE " << name << " gauge\n";
  };
  const auto labels = [this](int32_t index) {
    std::string uuid;
    for (const GpuInfo& gpu : inventory_info_.gpus) {
      if (gpu.index == index) uuid = gpu.uuid;
    }
    return "{node=\"" + options_.node + "\",gpu=\"" + std::to_string(index) + "\",uuid=\"" + uuid +
           "\"}";
  };
  gauge("berth_agent_gpu_utilization_ratio", "Share of time a kernel ran, last sample.");
  for (const GpuSample& s : last_samples_) {
    out << "berth_agent_gpu_utilization_ratio" << labels(s.index) << " "
        << static_cast<double>(s.utilization_percent) / 100.0 << "\n";
  }
  gauge("berth_agent_gpu_memory_used_bytes", "GPU memory in use, last sample.");
  for (const GpuSample& s : last_samples_) {
    out << "berth_agent_gpu_memory_used_bytes" << labels(s.index) << " "
        << s.memory_used_mib * 1024 * 1024 << "\n";
  }
  gauge("berth_agent_gpu_memory_total_bytes", "GPU memory.");
  for (const GpuSample& s : last_samples_) {
    out << "berth_agent_gpu_memory_total_bytes" << labels(s.index) << " "
        << s.memory_total_mib * 1024 * 1024 << "\n";
  }
  gauge("berth_agent_gpu_healthy", "1 when the GPU is healthy (ECC, XID).");
  for (const GpuSample& s : last_samples_) {
    out << "berth_agent_gpu_healthy" << labels(s.index) << " " << (s.healthy ? 1 : 0) << "\n";
  }
  gauge("berth_agent_task_cgroups",
        "1 when tasks run in cgroups of their own (limits enforced), 0 when not.");
  out << "berth_agent_task_cgroups{node=\"" << options_.node << "\",version=\"" << cgroups_version_
      << "\"} " << (cgroups_version_ == "off" ? 0 : 1) << "\n";
  gauge("berth_agent_tasks_running", "Tasks running on this node.");
  out << "berth_agent_tasks_running{node=\"" << options_.node << "\"} " << tasks_running_ << "\n";
  out << "# HELP berth_agent_heartbeats_total Heartbeats by result.\n"
      << "# TYPE berth_agent_heartbeats_total counter\n"
      << "berth_agent_heartbeats_total{node=\"" << options_.node << "\",result=\"ok\"} "
      << stats_.heartbeats_ok << "\n"
      << "berth_agent_heartbeats_total{node=\"" << options_.node << "\",result=\"failed\"} "
      << stats_.heartbeats_failed << "\n";
  return out.str();
}

}  // namespace berth::agent
