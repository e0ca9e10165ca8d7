#include "agent/task_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "agent/container_steps.h"
#include "agent/node_lease.h"
#include "agent/spawn.h"
#include "agent/step_files.h"
#include "agent/task_env.h"
#include "common/clock.h"
#include "protocol/signal_name.h"

namespace berth::agent {
namespace {

namespace fs = std::filesystem;

// A supervisor started by this agent gets this long to write its pid file
// before it counts as lost.
constexpr auto kStartWindow = std::chrono::seconds(30);

void AppendToLog(const std::string& dir, const std::string& line) {
  std::ofstream log(dir + "/" + task_files::kLog, std::ios::app);
  log << "berth: " << line << "\n";
}

std::optional<ProcessIdentity> ReadIdentity(const std::string& path) {
  Result<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return std::nullopt;
  return ProcessIdentity::Parse(*text);
}

// Makes `path` the account's with `mode` (the owner changes only when the
// agent is root; otherwise the account is the agent's own).
Status GiveTo(const std::string& path, const Account& account, mode_t mode) {
  if (::geteuid() == 0 && ::chown(path.c_str(), account.uid, account.gid) != 0) {
    return Unavailable("cannot give " + path + " to " + account.name + ": " + std::strerror(errno));
  }
  if (::chmod(path.c_str(), mode) != 0) {
    return Unavailable("cannot chmod " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

// An empty file (or directory) of the account's, created here.
Status CreateOwned(const std::string& path, const Account& account, bool directory, mode_t mode) {
  if (directory) {
    if (::mkdir(path.c_str(), 0700) != 0) {
      return Unavailable("cannot create " + path + ": " + std::strerror(errno));
    }
  } else {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return Unavailable("cannot create " + path + ": " + std::strerror(errno));
    ::close(fd);
  }
  return GiveTo(path, account, mode);
}

std::optional<core::Duration> ReadStopGrace(const std::string& dir) {
  Result<std::string> text = ReadWholeFile(dir + "/" + task_files::kStop);
  if (!text.ok()) return std::nullopt;
  int64_t millis = 0;
  std::from_chars(text->data(), text->data() + text->size(), millis);
  return core::Duration::Millis(millis);
}

}  // namespace

TaskRunner::TaskRunner(TaskRunnerOptions options)
    : options_(std::move(options)),
      run_as_(ThisProcessPolicy(options_.node, options_.allow_root_jobs)),
      tasks_dir_(options_.state_dir + "/tasks") {}

Result<std::unique_ptr<TaskRunner>> TaskRunner::Open(TaskRunnerOptions options) {
  std::unique_ptr<TaskRunner> runner(new TaskRunner(std::move(options)));
  std::error_code error;
  fs::create_directories(runner->tasks_dir_, error);
  if (error) {
    return Unavailable("--state-dir: cannot create " + runner->tasks_dir_ + ": " + error.message());
  }
  // Tasks reach their own work/ through it, and list nothing (task_dir.h).
  for (const std::string& dir : {runner->options_.state_dir, runner->tasks_dir_}) {
    if (::chmod(dir.c_str(), 0711) != 0) {
      return Unavailable("--state-dir: cannot chmod " + dir + ": " + std::strerror(errno));
    }
  }
  for (const auto& entry : fs::directory_iterator(runner->tasks_dir_, error)) {
    if (!entry.is_directory()) continue;
    std::optional<TaskKey> key = TaskKey::FromDirName(entry.path().filename().string());
    if (key) runner->Adopt(*key, entry.path().string());
  }
  if (error) return Unavailable("--state-dir: cannot list " + runner->tasks_dir_);
  runner->Refresh();
  return runner;
}

void TaskRunner::Adopt(const TaskKey& key, const std::string& dir) {
  Entry entry;
  entry.dir = dir;
  entry.task.key = key;
  if (Result<std::string> spec_text = ReadWholeFile(dir + "/" + task_files::kSpec);
      spec_text.ok()) {
    if (Result<TaskSpec> spec = ParseTaskSpec(*spec_text); spec.ok()) entry.task.gpus = spec->gpus;
  }
  entry.task.acked = FileExists(dir + "/" + task_files::kAcked);
  entry.task.stop_grace = ReadStopGrace(dir);
  const bool exited = FileExists(dir + "/" + task_files::kExit);
  entry.supervisor = ReadIdentity(dir + "/" + task_files::kSupervisor);
  if (!exited && !entry.supervisor) {
    // The agent stopped between creating the directory and starting the
    // supervisor: the task never ran.
    std::error_code error;
    fs::remove_all(dir, error);
    return;
  }
  entry.task.phase = LocalPhase::kRunning;  // RefreshOne reads the exit, if any
  entries_[key] = std::move(entry);
}

void TaskRunner::Refresh() {
  std::erase_if(children_, ReapIfExited);
  for (auto& [key, entry] : entries_) {
    if (entry.task.phase == LocalPhase::kRunning) RefreshOne(entry);
  }
}

void TaskRunner::RefreshOne(Entry& entry) {
  const std::string exit_path = entry.dir + "/" + task_files::kExit;
  const auto read_exit = [&]() -> bool {
    Result<std::string> text = ReadWholeFile(exit_path);
    if (!text.ok()) return false;
    Result<ExitStatus> status = ParseExitStatus(*text);
    entry.task.phase = LocalPhase::kExited;
    entry.task.exit = status.ok() ? *status : ExitStatus{255, std::nullopt, "lost", {}};
    return true;
  };
  if (read_exit()) return;
  Result<std::string> starting = ReadWholeFile(entry.dir + "/" + task_files::kStarting);
  entry.task.starting = starting.ok() ? starting->substr(0, starting->find('\n')) : "";
  if (!entry.supervisor) entry.supervisor = ReadIdentity(entry.dir + "/" + task_files::kSupervisor);
  if (!entry.supervisor) {
    if (entry.launched && std::chrono::steady_clock::now() - *entry.launched < kStartWindow) {
      return;  // still starting
    }
    SettleLost(entry);
    return;
  }
  if (IsAlive(*entry.supervisor)) {
    entry.task.checkpoint_age = CheckpointAge(entry.dir);
    return;
  }
  // It may have written the exit between our two looks.
  if (read_exit()) return;
  SettleLost(entry);
}

// How long ago the task last touched its checkpoint file (lstat: a link
// the task made is not followed), by this node's clock; none without one.
std::optional<core::Duration> TaskRunner::CheckpointAge(const std::string& dir) {
  struct stat info {};
  if (::lstat(CheckpointFile(dir).c_str(), &info) != 0) return std::nullopt;
  const core::Time touched = core::Time::FromMicros(int64_t{info.st_mtim.tv_sec} * 1'000'000 +
                                                    info.st_mtim.tv_nsec / 1000);
  return core::Max(SystemClock().Now() - touched, core::Duration::Zero());
}

// The supervisor died without recording an outcome (killed, or the machine
// rebooted): stop whatever of the task is left, and record it as killed.
void TaskRunner::SettleLost(Entry& entry) {
  if (std::optional<ProcessIdentity> task = ReadIdentity(entry.dir + "/" + task_files::kTask);
      task && IsAlive(*task)) {
    ::kill(-task->pid, SIGKILL);
  }
  if (entry.supervisor && entry.supervisor->boot_id == BootId()) {
    // Its session outlives it while any member lives; members started after
    // the supervisor, so a recycled session id is not mistaken for it.
    for (const ProcStat& process : ListProcesses()) {
      if (process.session == entry.supervisor->pid &&
          process.start_ticks >= entry.supervisor->start_ticks) {
        ::kill(process.pid, SIGKILL);
      }
    }
  }
  // Whatever is still in its cgroup is the task's too (the cgroup holds
  // even what left its session); then the cgroup goes. spec.json says where.
  const Result<std::string> spec_text = ReadWholeFile(entry.dir + "/" + task_files::kSpec);
  const Result<TaskSpec> spec =
      spec_text.ok() ? ParseTaskSpec(*spec_text) : Result<TaskSpec>(spec_text.status());
  if (spec.ok() && spec->cgroup) {
    KillCgroup(*spec->cgroup);
    if (Status removed = RemoveTaskCgroup(*spec->cgroup); !removed.ok()) {
      AppendToLog(entry.dir, removed.message());
    }
  }
  // Its container too (the runtime keeps it without a supervisor).
  if (spec.ok() && spec->container) {
    if (Status removed = RemoveContainer(*spec->container); !removed.ok()) {
      AppendToLog(entry.dir, removed.message());
    }
  }
  RecordOutcome(entry, ExitStatus{std::nullopt, SIGKILL, "lost", {}},
                "the supervisor of this task vanished; killed what was left of the task");
}

void TaskRunner::RecordOutcome(Entry& entry, ExitStatus status, const std::string& note) {
  status.end_time = SystemClock().Now();
  status.message = note;
  AppendToLog(entry.dir, note);
  (void)WriteFileAtomic(entry.dir + "/" + task_files::kExit, ExitStatusJson(status));
  entry.task.phase = LocalPhase::kExited;
  entry.task.exit = std::move(status);
}

std::vector<LocalTask> TaskRunner::Tasks() const {
  std::vector<LocalTask> out;
  out.reserve(entries_.size());
  for (const auto& [key, entry] : entries_) out.push_back(entry.task);
  return out;
}

Status TaskRunner::DeliverSteps(const TaskKey& key,
                                const std::vector<protocol::StepLaunch>& steps) {
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.task.phase != LocalPhase::kRunning) return Status::Ok();
  for (const protocol::StepLaunch& step : steps) {
    const StepTaskName name{step.step, step.rank};
    const bool known = FileExists(StepFile(it->second.dir, name, ".json"));
    const bool cancel_known = FileExists(StepFile(it->second.dir, name, ".cancel"));
    if (known && (!step.cancel || cancel_known)) continue;
    BERTH_RETURN_IF_ERROR(DeliverStepTask(
        it->second.dir, StepRequestFile{name, step.command, step.env}, step.cancel));
    if (it->second.supervisor) ::kill(it->second.supervisor->pid, SIGUSR1);
  }
  return Status::Ok();
}

std::vector<protocol::StepTaskReport> TaskRunner::StepExits() const {
  std::vector<protocol::StepTaskReport> out;
  for (const auto& [key, entry] : entries_) {
    for (const StepTaskExit& exit : ReadStepExits(entry.dir)) {
      out.push_back(protocol::StepTaskReport{key.job, key.task, key.attempt, exit.name.step,
                                             exit.name.rank, exit.exit_code, exit.signal});
    }
  }
  return out;
}

std::vector<std::string> TaskRunner::RunningTaskDirs() const {
  std::vector<std::string> dirs;
  for (const auto& [key, entry] : entries_) {
    if (entry.task.phase == LocalPhase::kRunning) dirs.push_back(entry.dir);
  }
  return dirs;
}

Status TaskRunner::Start(const protocol::TaskAssignment& assignment) {
  const TaskKey key{assignment.job, assignment.task, assignment.attempt};
  if (entries_.contains(key)) return Status(StatusCode::kAlreadyExists, ToString(key) + " exists");
  const std::string dir = tasks_dir_ + "/" + key.DirName();
  std::error_code error;
  fs::remove_all(dir, error);  // a never-started leftover
  if (::mkdir(dir.c_str(), 0711) != 0 || ::chmod(dir.c_str(), 0711) != 0) {
    return Unavailable("cannot create " + dir + ": " + std::strerror(errno));
  }
  Entry entry;
  entry.dir = dir;
  entry.task.key = key;
  entry.task.gpus = assignment.gpus;
  entry.launched = std::chrono::steady_clock::now();

  Result<Account> account = ResolveRunAs(assignment.launch.run_as.user, run_as_);
  Status prepared = account.ok() ? Prepare(assignment, dir, *account) : account.status();
  Result<pid_t> pid = Status(StatusCode::kInternal, "not started");
  if (prepared.ok()) {
    SpawnRequest request;
    request.argv = options_.supervisor_command;
    request.argv.push_back(dir);
    request.log_path = dir + "/" + task_files::kLog;
    pid = SpawnDetached(request);
    if (pid.ok()) {
      children_.push_back(*pid);
    } else {
      prepared = pid.status();
    }
  }
  if (!prepared.ok()) {
    RecordOutcome(
        entry, ExitStatus{127, std::nullopt, "start_failed", {}},
        account.ok() ? "cannot start the task: " + prepared.message() : prepared.message());
    entries_[key] = std::move(entry);
    return prepared;
  }
  // The supervisor writes this file too; whoever is first, the content is
  // the same. Written here so a stop right after the start can signal it.
  if (std::optional<ProcessIdentity> identity = IdentityOf(*pid)) {
    entry.supervisor = identity;
    (void)WriteFileAtomic(dir + "/" + task_files::kSupervisor, identity->Format() + "\n");
  }
  entry.task.phase = LocalPhase::kRunning;
  entries_[key] = std::move(entry);
  return Status::Ok();
}

Status TaskRunner::Prepare(const protocol::TaskAssignment& assignment, const std::string& dir,
                           const Account& account) {
  TaskSpec spec =
      BuildTaskSpec(assignment, TaskContext{options_.node, dir, options_.base_env, account,
                                            options_.cgroups ? &*options_.cgroups : nullptr});
  spec.lease_file = LeasePath(options_.state_dir);
  if (account.uid != run_as_.agent_uid) {
    spec.run_as = TaskIdentity{
        account.name, account.uid, account.gid, {account.groups.begin(), account.groups.end()}};
  }
  if (assignment.launch.container) {
    BERTH_RETURN_IF_ERROR(PrepareContainer(assignment, dir, account, spec));
  }
  // The log before the supervisor opens it (appending): the user's to read.
  BERTH_RETURN_IF_ERROR(CreateOwned(dir + "/" + task_files::kLog, account, false, 0600));
  BERTH_RETURN_IF_ERROR(CreateOwned(ScratchDir(dir), account, true, 0700));
  if (!assignment.launch.script.empty()) {
    const std::string script = dir + "/" + task_files::kScript;
    BERTH_RETURN_IF_ERROR(WriteFileAtomic(script, assignment.launch.script));
    BERTH_RETURN_IF_ERROR(GiveTo(script, account, 0700));
  }
  return WriteFileAtomic(dir + "/" + task_files::kSpec, TaskSpecJson(spec));
}

Status TaskRunner::PrepareContainer(const protocol::TaskAssignment& assignment,
                                    const std::string& dir, const Account& account,
                                    TaskSpec& spec) {
  if (!options_.containers) {
    return FailedPrecondition("node " + options_.node +
                              " has no working container runtime for image " +
                              assignment.launch.container->image);
  }
  ContainerTask task;
  task.key = spec.key;
  task.node = options_.node;
  task.state_dir = options_.state_dir;
  task.uid = account.uid;
  task.gid = account.gid;
  task.groups = {account.groups.begin(), account.groups.end()};
  task.gpus = assignment.gpus;
  task.cdi_gpus = options_.cdi_gpus;
  task.env_file = dir + "/" + task_files::kContainerEnv;
  task.scratch_dir = ScratchDir(dir);
  if (!assignment.launch.script.empty()) task.script_path = dir + "/" + task_files::kScript;
  task.pids_max = options_.pids_max;
  std::map<std::string, std::string> host_env;
  for (const std::string& entry : spec.env) {
    const size_t equals = entry.find('=');
    host_env[entry.substr(0, equals)] = entry.substr(equals + 1);
  }
  const EnvFile env =
      ContainerEnvFile(ContainerEnvironment(host_env, *assignment.launch.container, task));
  BERTH_RETURN_IF_ERROR(WriteFileAtomic(task.env_file, env.text));
  spec.argv = ContainerRunArgv(*options_.containers, assignment.launch, task);
  // Values an env file cannot hold go on the command line, after `run`.
  auto after_run =
      spec.argv.begin() + static_cast<std::ptrdiff_t>(options_.containers->command.size() + 1);
  for (const std::string& entry : env.argv_env) {
    after_run = spec.argv.insert(after_run, {"--env", entry}) + 2;
  }
  // The runtime's own process runs with the agent's plain environment, in
  // "/", outside the task's cgroup (the runtime enforces the limits).
  spec.env.clear();
  for (const auto& [name, value] : options_.base_env) spec.env.push_back(name + "=" + value);
  spec.workdir = "/";
  spec.cgroup.reset();
  spec.container = ContainerSpecFor(*options_.containers, assignment.launch, task);
  return Status::Ok();
}

std::vector<std::string> TaskRunner::RunningContainerNames() const {
  std::vector<std::string> names;
  for (const auto& [key, entry] : entries_) {
    if (entry.task.phase != LocalPhase::kRunning) continue;
    Result<std::string> text = ReadWholeFile(entry.dir + "/" + task_files::kSpec);
    if (!text.ok()) continue;
    Result<TaskSpec> spec = ParseTaskSpec(*text);
    if (spec.ok() && spec->container) names.push_back(spec->container->name);
  }
  return names;
}

Status TaskRunner::Stop(const TaskKey& key, core::Duration grace) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return NotFound(ToString(key) + " is not on this node");
  Entry& entry = it->second;
  if (entry.task.phase != LocalPhase::kRunning) return Status::Ok();
  const int64_t millis = std::max<int64_t>(0, grace.micros() / 1000);
  // The file first: the supervisor reads the grace from it when signalled,
  // or when it starts, if the signal came before it was ready.
  BERTH_RETURN_IF_ERROR(
      WriteFileAtomic(entry.dir + "/" + task_files::kStop, std::to_string(millis)));
  entry.task.stop_grace = grace;
  if (!entry.supervisor) entry.supervisor = ReadIdentity(entry.dir + "/" + task_files::kSupervisor);
  if (entry.supervisor && IsAlive(*entry.supervisor)) ::kill(entry.supervisor->pid, SIGTERM);
  return Status::Ok();
}

Status TaskRunner::Signal(const TaskKey& key, const std::vector<protocol::SignalRequest>& signals) {
  auto it = entries_.find(key);
  if (it == entries_.end() || signals.empty()) return Status::Ok();
  Entry& entry = it->second;
  if (entry.task.phase != LocalPhase::kRunning) return Status::Ok();
  std::vector<SignalLine> lines;
  for (const protocol::SignalRequest& signal : signals) {
    if (std::optional<int> number = protocol::SignalNumber(signal.name)) {
      lines.push_back(SignalLine{signal.id, *number, signal.batch_only});
    }
  }
  const std::string text = SignalsFileText(lines);
  const std::string path = entry.dir + "/" + task_files::kSignals;
  if (Result<std::string> current = ReadWholeFile(path); current.ok() && *current == text) {
    return Status::Ok();
  }
  BERTH_RETURN_IF_ERROR(WriteFileAtomic(path, text));
  // A supervisor that has not written its pid yet reads the file once it
  // runs the task; one that has, blocked SIGUSR1 before: the signal waits
  // for its loop.
  if (!entry.supervisor) entry.supervisor = ReadIdentity(entry.dir + "/" + task_files::kSupervisor);
  if (entry.supervisor && IsAlive(*entry.supervisor)) ::kill(entry.supervisor->pid, SIGUSR1);
  return Status::Ok();
}

Status TaskRunner::MarkAcked(const TaskKey& key) {
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.task.acked) return Status::Ok();
  BERTH_RETURN_IF_ERROR(WriteFileAtomic(it->second.dir + "/" + task_files::kAcked, ""));
  it->second.task.acked = true;
  return Status::Ok();
}

int TaskRunner::Collect(core::Time cutoff) {
  int removed = 0;
  for (auto it = entries_.begin(); it != entries_.end();) {
    const LocalTask& task = it->second.task;
    if (task.phase == LocalPhase::kExited && task.acked && task.exit &&
        task.exit->end_time < cutoff) {
      std::error_code error;
      fs::remove_all(it->second.dir, error);
      it = entries_.erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  return removed;
}

}  // namespace berth::agent
