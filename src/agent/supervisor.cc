#include "agent/supervisor.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <vector>

#include "agent/cgroup_outcome.h"
#include "agent/container_steps.h"
#include "agent/node_lease.h"
#include "agent/proc.h"
#include "agent/step_host.h"
#include "agent/task_cgroup.h"
#include "agent/task_dir.h"
#include "common/clock.h"

extern char** environ;

namespace berth::agent {
namespace {

using SteadyClock = std::chrono::steady_clock;

// What the task left behind after its main process exited gets at most this
// long after SIGTERM (or the job's grace, if shorter).
constexpr auto kLeftoverGrace = std::chrono::seconds(5);
// Why a task stopped with its node's lease.
constexpr char kLeaseMessage[] =
    "node lease expired: the agent could not renew it with the server in time";
// The agent's word that the `signals` file has new lines (task_dir.h) or a
// step task waits in `steps/` (step_files.h): either is read again on it.
constexpr int kSignalsWaiting = SIGUSR1;
// How often SIGKILL is repeated while descendants remain.
constexpr auto kKillSweep = std::chrono::milliseconds(50);
// A container is stopped by its runtime (SIGTERM, SIGKILL after the
// grace); only when the runtime has not managed that in this much more does
// the supervisor kill the runtime's processes itself.
constexpr auto kContainerStopSlack = std::chrono::seconds(15);
// A stop of a container that did not exist yet (still being created) is
// sent again this often until the runtime's `run` ends.
constexpr auto kContainerStopRetry = std::chrono::seconds(2);

// A line in the task's log (the supervisor's stderr is the log).
void Note(const std::string& text) {
  std::fprintf(stderr, "berth: %s\n", text.c_str());
  std::fflush(stderr);
}

// Signals the task's process group, every other process in this session
// (the task may have made new groups) and every child of ours (orphans that
// left the session were reparented here: we are their subreaper). Each
// process once: the group's members, in this session too, are skipped in
// the sweep (a handler of SIGTERM would otherwise run twice).
void SignalTree(pid_t self, pid_t task_group, int signal_number) {
  if (task_group > 0) ::kill(-task_group, signal_number);
  for (const ProcStat& process : ListProcesses()) {
    if (process.pid == self || (task_group > 0 && process.pgrp == task_group)) continue;
    if (process.session == self || process.ppid == self) ::kill(process.pid, signal_number);
  }
}

// "40 s", "0.5 s"
std::string FormatSeconds(core::Duration duration) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", static_cast<double>(duration.micros()) / 1e6);
  return text;
}

void RecordExit(const std::string& dir, ExitStatus status) {
  status.end_time = SystemClock().Now();
  if (Status written = WriteFileAtomic(dir + "/" + task_files::kExit, ExitStatusJson(status));
      !written.ok()) {
    Note("cannot record the exit status: " + written.message());
  }
}

// The task never started: says why in the log and records it as its end.
// Returns the supervisor's exit code.
int RecordStartFailure(const std::string& dir, const std::string& why) {
  Note(why);
  RecordExit(dir, ExitStatus{127, std::nullopt, "start_failed", {}, why});
  return 0;
}

std::optional<std::chrono::milliseconds> RequestedGrace(const std::string& dir) {
  Result<std::string> text = ReadWholeFile(dir + "/" + task_files::kStop);
  if (!text.ok()) return std::nullopt;
  int64_t millis = 0;
  const std::string& value = *text;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), millis);
  if (error != std::errc() || millis < 0) return std::nullopt;
  return std::chrono::milliseconds(millis);
}

// In the forked child: says why the task could not start (to the parent
// through `report`, and in the log), and exits 127 as a shell would.
[[noreturn]] void FailStart(int report, const std::string& why) {
  std::fprintf(stderr, "berth: %s\n", why.c_str());
  std::fflush(stderr);
  size_t written = 0;
  while (written < why.size()) {
    const ssize_t n = ::write(report, why.data() + written, why.size() - written);
    if (n <= 0 && errno != EINTR) break;
    if (n > 0) written += static_cast<size_t>(n);
  }
  ::_exit(127);
}

// In the forked child: takes on the task's account, groups first (setgid
// and setuid drop the right to change them), and checks that root is gone.
void BecomeUser(const TaskIdentity& identity, int report) {
  const std::vector<gid_t> groups(identity.groups.begin(), identity.groups.end());
  const auto fail = [&](const char* step) {
    FailStart(report,
              "cannot become user " + identity.user + ": " + step + ": " + std::strerror(errno));
  };
  if (::setgroups(groups.size(), groups.data()) != 0) fail("setgroups");
  if (::setgid(identity.gid) != 0) fail("setgid");
  if (::setuid(identity.uid) != 0) fail("setuid");
  if (identity.uid != 0 && (::setuid(0) == 0 || ::geteuid() != identity.uid)) {
    errno = EPERM;
    fail("root privileges remain");
  }
}

// In the forked child, first of all (while it is still root): joins the
// task's cgroup, so that everything the task runs is inside its limits.
void JoinCgroup(const std::optional<CgroupJoin>& join, int report) {
  if (!join || join->JoinFromChild()) return;
  FailStart(report, std::string("cannot join the task's cgroup: ") + std::strerror(errno));
}

// The task's cgroup, created with its limits and ready to join; nullopt
// for a task without one. A failure is the task's: it does not start.
Result<std::optional<CgroupJoin>> PrepareCgroup(const TaskSpec& spec) {
  if (!spec.cgroup) return std::optional<CgroupJoin>();
  BERTH_RETURN_IF_ERROR(CreateTaskCgroup(*spec.cgroup));
  Result<CgroupJoin> join = CgroupJoin::Open(*spec.cgroup);
  if (!join.ok()) {
    (void)RemoveTaskCgroup(*spec.cgroup);
    return join.status();
  }
  return std::optional<CgroupJoin>(std::move(*join));
}

// The task has ended and nothing of it is left: what its cgroup says about
// its end, then the cgroup goes.
ExitStatus SettleCgroup(const TaskCgroup& cgroup, ExitStatus status) {
  status = WithCgroupUsage(std::move(status), cgroup, ReadCgroupUsage(cgroup));
  if (status.reason == "out_of_memory") Note(status.message);
  KillCgroup(cgroup);  // nothing, unless a process was put there from outside
  if (Status removed = RemoveTaskCgroup(cgroup); !removed.ok()) Note(removed.message());
  return status;
}

// In the forked child, as the task's user: stdout (and stderr, unless it
// has its own file) to the job's --output file, stderr to its --error
// file, opened as Slurm does: created, truncated unless --open-mode append.
void RedirectOutput(const TaskSpec& spec, int report) {
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (spec.append_output ? O_APPEND : O_TRUNC);
  const auto open_as = [&](const std::string& path, std::initializer_list<int> targets) {
    const int fd = ::open(path.c_str(), flags, 0644);
    if (fd < 0) {
      FailStart(report, "cannot open the output file " + path + ": " + std::strerror(errno));
    }
    for (int target : targets) ::dup2(fd, target);
    ::close(fd);
  };
  const bool own_error = !spec.error_path.empty() && spec.error_path != spec.output_path;
  if (!spec.output_path.empty()) {
    if (own_error) {
      open_as(spec.output_path, {STDOUT_FILENO});
    } else {
      open_as(spec.output_path, {STDOUT_FILENO, STDERR_FILENO});
    }
  }
  if (own_error) open_as(spec.error_path, {STDERR_FILENO});
}

// In the forked child of a container task, as root: opens the output files
// with the job's user's file-system identity (they must be the user's, as
// on the host), then takes root back to run the runtime.
void RedirectOutputAsUser(const TaskSpec& spec, int report) {
  if (!spec.run_as) return RedirectOutput(spec, report);
  const TaskIdentity& identity = *spec.run_as;
  const std::vector<gid_t> groups(identity.groups.begin(), identity.groups.end());
  if (::setgroups(groups.size(), groups.data()) != 0 || ::setegid(identity.gid) != 0 ||
      ::seteuid(identity.uid) != 0) {
    FailStart(report, "cannot take the identity of " + identity.user + ": " + std::strerror(errno));
  }
  RedirectOutput(spec, report);
  if (::seteuid(0) != 0 || ::setegid(0) != 0 || ::setgroups(0, nullptr) != 0) {
    FailStart(report, std::string("cannot take root back: ") + std::strerror(errno));
  }
}

// In the forked child: becomes the task. Any call is safe here, as the
// supervisor is single-threaded; the account comes resolved in the spec
// (the supervisor is static: no NSS). `report` is closed by a successful
// exec, and carries the reason of a failed start otherwise.
[[noreturn]] void ExecTask(const TaskSpec& spec, std::vector<char*>& argv, std::vector<char*>& envp,
                           int report) {
  ::setpgid(0, 0);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // A container's runtime runs as root; the container gets the user.
  if (spec.run_as && !spec.container) BecomeUser(*spec.run_as, report);
  if (!spec.workdir.empty() && ::chdir(spec.workdir.c_str()) != 0) {
    FailStart(report,
              "cannot enter the working directory " + spec.workdir + ": " + std::strerror(errno));
  }
  if (spec.container) {
    RedirectOutputAsUser(spec, report);
  } else {
    RedirectOutput(spec, report);
  }
  environ = envp.data();  // execvp searches the task's own PATH
  ::execvp(argv[0], argv.data());
  FailStart(report, std::string("cannot run ") + argv[0] + ": " + std::strerror(errno));
}

// In the parent: what the child said before exec closed its end (nothing:
// the task started).
std::string ReadStartFailure(int report) {
  std::string why;
  char buffer[512];
  while (true) {
    const ssize_t n = ::read(report, buffer, sizeof buffer);
    if (n > 0) {
      why.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  return why;
}

class Supervision {
 public:
  Supervision(std::string dir, TaskSpec spec, pid_t self, const std::optional<CgroupJoin>& join)
      : dir_(std::move(dir)), spec_(std::move(spec)), self_(self), steps_(dir_, spec_, join) {}

  // Runs the task to its end and returns how its main process ended.
  ExitStatus Run(pid_t child) {
    child_ = child;
    const auto start = SteadyClock::now();
    if (spec_.time_limit) {
      limit_at_ = start + std::chrono::microseconds(spec_.time_limit->micros());
      if (spec_.early_signal) {
        early_at_ =
            *limit_at_ - std::min(std::chrono::microseconds(spec_.early_signal->before.micros()),
                                  std::chrono::microseconds(spec_.time_limit->micros()));
      }
    }
    // Signals sent before we were ready.
    DeliverRequestedSignals();
    // A stop requested before we were ready (the agent writes the file first).
    if (std::optional<std::chrono::milliseconds> grace = RequestedGrace(dir_)) {
      Terminate(*grace, "stopped");
    }
    sigset_t signals = HandledSignals();
    while (true) {
      if (ReapAll()) break;
      // Job steps (step_host.h); none in a container, none once ending.
      if (!spec_.container) steps_.Poll(!terminating_ && !main_exited_);
      FenceIfLeaseEnded();
      const auto now = SteadyClock::now();
      RepeatContainerStop(now);
      if (kill_at_ && now >= *kill_at_) SignalTree(self_, TaskGroup(), SIGKILL);
      if (early_at_ && now >= *early_at_) {
        early_at_.reset();  // once per run
        const EarlySignalSpec& early = *spec_.early_signal;
        Note("time limit in " + FormatSeconds(early.before) + ": sending signal " +
             std::to_string(early.signal) + (early.batch_only ? " to the batch shell" : ""));
        Deliver(early.signal, early.batch_only);
      }
      if (limit_at_ && now >= *limit_at_ && !terminating_) {
        limit_message_ = "time limit of " + FormatSeconds(*spec_.time_limit) + " reached";
        Note(limit_message_ + "; stopping the task");
        Terminate(std::chrono::microseconds(spec_.grace.micros()), "time_limit");
      }
      timespec timeout = TimeUntilNextEvent(SteadyClock::now());
      siginfo_t info;
      const int got = ::sigtimedwait(&signals, &info, &timeout);
      if (got == kSignalsWaiting) DeliverRequestedSignals();
      if (got == SIGTERM || got == SIGINT || got == SIGHUP) {
        // The agent's stop of a node whose lease ended says so.
        FenceIfLeaseEnded();
        Terminate(
            RequestedGrace(dir_).value_or(std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::microseconds(spec_.grace.micros()))),
            "stopped");
      }
    }
    ExitStatus status;
    status.reason = reason_;
    if (reason_ == "time_limit") status.message = limit_message_;
    if (reason_ == "lease_expired") status.message = kLeaseMessage;
    if (WIFEXITED(main_status_)) status.exit_code = WEXITSTATUS(main_status_);
    if (WIFSIGNALED(main_status_)) status.signal = WTERMSIG(main_status_);
    if (spec_.container) status = JudgeContainerEnd(std::move(status));
    return status;
  }

  static sigset_t HandledSignals() {
    sigset_t signals;
    sigemptyset(&signals);
    for (int signal_number : {SIGTERM, SIGINT, SIGHUP, SIGCHLD, kSignalsWaiting}) {
      sigaddset(&signals, signal_number);
    }
    return signals;
  }

 private:
  // A signal for the task (--signal, scancel --signal): to its main process
  // only when `batch_only` (and then only on task 0, Slurm's batch shell),
  // else to all its processes; a container's through its runtime (to the
  // container's main process). Nothing once the task is being stopped.
  void Deliver(int signal_number, bool batch_only) {
    if (terminating_ || main_exited_) return;
    if (batch_only && spec_.key.task != 0) return;
    if (spec_.container) {
      const pid_t kill_pid = StartContainerKill(*spec_.container, signal_number);
      if (kill_pid < 0) Note("cannot run the container runtime's kill");
      return;  // reaped with the other children
    }
    if (batch_only) {
      ::kill(child_, signal_number);
    } else {
      SignalTree(self_, TaskGroup(), signal_number);
    }
  }

  // The agent rewrote the `signals` file: delivers the lines not delivered
  // yet, oldest first.
  void DeliverRequestedSignals() {
    Result<std::string> text = ReadWholeFile(dir_ + "/" + task_files::kSignals);
    if (!text.ok()) return;
    for (const SignalLine& line : ParseSignalsFile(*text)) {
      if (line.id <= delivered_through_) continue;
      delivered_through_ = line.id;
      Note("signal " + std::to_string(line.signal) + " requested" +
           (line.batch_only ? " for the batch shell" : ""));
      Deliver(line.signal, line.batch_only);
    }
  }

  // SIGTERM to everything, SIGKILL after `grace`. A later request may only
  // shorten the wait (a fencing stop with no grace after a polite one).
  template <typename Rep, typename Period>
  void Terminate(std::chrono::duration<Rep, Period> grace, const std::string& why) {
    auto kill_at = SteadyClock::now() + grace;
    // A running container is stopped by its runtime; the supervisor's own
    // SIGKILL of the runtime's processes is the fallback.
    const bool through_runtime = spec_.container && !main_exited_;
    if (through_runtime) kill_at += kContainerStopSlack;
    if (!terminating_) {
      terminating_ = true;
      if (!main_exited_) reason_ = why;
      if (why == "stopped") {
        const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(grace).count();
        Note("stop requested: SIGTERM to the task, SIGKILL after " + std::to_string(millis) +
             " ms");
      }
      if (through_runtime) {
        container_grace_s_ =
            (std::chrono::duration_cast<std::chrono::milliseconds>(grace).count() + 999) / 1000;
        StopContainer();
      } else {
        SignalTree(self_, TaskGroup(), SIGTERM);
      }
    } else if (through_runtime) {
      // A shorter grace (fencing after a polite stop): ask again with it.
      const int64_t seconds =
          (std::chrono::duration_cast<std::chrono::milliseconds>(grace).count() + 999) / 1000;
      if (seconds < container_grace_s_) {
        container_grace_s_ = seconds;
        StopContainer();
      }
    }
    if (!kill_at_ || kill_at < *kill_at_) kill_at_ = kill_at;
  }

  void StopContainer() {
    stop_pid_ = StartContainerStop(*spec_.container, container_grace_s_);
    last_stop_ = SteadyClock::now();
  }

  // The container may not have existed when it was first stopped (the
  // runtime was still creating it): stop it again until `run` has ended.
  void RepeatContainerStop(SteadyClock::time_point now) {
    if (!spec_.container || !terminating_ || main_exited_ || stop_pid_ > 0) return;
    if (now - last_stop_ >= kContainerStopRetry) StopContainer();
  }

  // The runtime's `run` has ended: how the container ended, then it goes.
  void SettleContainer() {
    container_settled_ = true;
    container_end_ = InspectContainer(*spec_.container);
    if (Status removed = RemoveContainer(*spec_.container); !removed.ok()) {
      Note(removed.message());
    }
  }

  // What the container's end means: killed by the OOM killer (the runtime
  // says so, or it was SIGKILLed at a memory limit nobody stopped it at:
  // on cgroup v1 hosts the runtime cannot tell), or never started (the
  // runtime's own failure, exit 125).
  ExitStatus JudgeContainerEnd(ExitStatus status) const {
    const ContainerSpec& container = *spec_.container;
    const std::string limit = std::to_string(container.memory_mib) + " MiB";
    if (container_end_ && container_end_->oom_killed) {
      status.reason = "out_of_memory";
      status.message = "out of memory: the container was killed at its limit of " + limit;
    } else if (status.reason == "exited" && status.exit_code == 128 + SIGKILL &&
               container.memory_mib > 0) {
      status.reason = "out_of_memory";
      status.message = "killed (SIGKILL) at its memory limit of " + limit +
                       ": out of memory (nothing else stopped it)";
    } else if (status.reason == "exited" && status.exit_code == 125) {
      status.reason = "start_failed";
      status.message = "the container runtime could not run image " + container.image +
                       " (exit 125; the task's log has its error)";
    }
    if (status.reason == "out_of_memory") Note(status.message);
    return status;
  }

  // The task's process group while its leader lives; after that its pid may
  // be reused, and the group's members are found through the session anyway
  // (a process group never spans sessions).
  pid_t TaskGroup() const { return main_exited_ ? 0 : child_; }

  // Reaps every exited child. True when the main process has exited and
  // nothing is left (no child, and so no descendant: orphans are ours). A
  // main process that exited leaving others running gets them stopped; one
  // that left nothing costs no walk of /proc (most tasks).
  bool ReapAll() {
    while (true) {
      int status = 0;
      const pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid > 0) {
        if (pid == child_) {
          main_exited_ = true;
          main_status_ = status;
        }
        if (pid == stop_pid_) stop_pid_ = 0;
        (void)steps_.Reaped(pid, status);
        continue;
      }
      if (pid < 0 && errno == EINTR) continue;
      if (main_exited_ && spec_.container && !container_settled_) {
        SettleContainer();
        continue;  // reap what the runtime's commands left
      }
      if (pid < 0 && errno == ECHILD) return main_exited_;
      if (main_exited_ && !terminating_) {
        const auto grace = std::min<std::chrono::microseconds>(
            kLeftoverGrace, std::chrono::microseconds(spec_.grace.micros()));
        Terminate(grace, "exited");
      }
      return false;
    }
  }

  // The node's lease ended (node_lease.h): the server may start this job
  // elsewhere once the lease and its margin are past, so the task must be
  // gone by then. The lease file is read about once a second (the loop
  // wakes at least that often), and whenever a stop arrives.
  void FenceIfLeaseEnded() {
    if (fenced_ || spec_.lease_file.empty()) return;
    const std::optional<SteadyClock::time_point> end = ReadLeaseEnd(spec_.lease_file);
    if (!end || SteadyClock::now() < *end) return;
    fenced_ = true;
    Note(std::string(kLeaseMessage) + "; stopping the task");
    Terminate(std::min<std::chrono::microseconds>(kLeaseStopGrace,
                                                  std::chrono::microseconds(spec_.grace.micros())),
              "lease_expired");
  }

  timespec TimeUntilNextEvent(SteadyClock::time_point now) const {
    auto wake = now + std::chrono::seconds(1);
    if (kill_at_) wake = std::min(wake, std::max(*kill_at_, now + kKillSweep));
    if (limit_at_ && !terminating_) wake = std::min(wake, *limit_at_);
    if (early_at_ && !terminating_) wake = std::min(wake, *early_at_);
    const auto wait = std::max(std::chrono::nanoseconds(std::chrono::milliseconds(1)),
                               std::chrono::nanoseconds(wake - now));
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(wait);
    return timespec{static_cast<time_t>(seconds.count()),
                    static_cast<long>((wait - seconds).count())};
  }

  const std::string dir_;
  const TaskSpec spec_;
  const pid_t self_;
  pid_t child_ = 0;
  bool terminating_ = false;
  bool fenced_ = false;
  bool main_exited_ = false;
  int main_status_ = 0;
  std::string reason_ = "exited";
  std::string limit_message_;
  std::optional<SteadyClock::time_point> limit_at_;
  // When the early signal (--signal) is due; reset once sent.
  std::optional<SteadyClock::time_point> early_at_;
  // The last id of the `signals` file delivered.
  int64_t delivered_through_ = 0;
  std::optional<SteadyClock::time_point> kill_at_;
  // Container tasks: the runtime's `stop` in flight (0: none), when it was
  // last sent and with what grace; whether the ended container was read and
  // removed, and how it ended.
  pid_t stop_pid_ = 0;
  SteadyClock::time_point last_stop_;
  int64_t container_grace_s_ = 0;
  bool container_settled_ = false;
  std::optional<ContainerEnd> container_end_;
  StepHost steps_;
};

}  // namespace

int RunSupervisor(const std::string& task_dir) {
  const pid_t self = ::getpid();
  // The agent blocked these before exec so that a stop sent while we start
  // waits for us; block them again in case someone else started us.
  sigset_t signals = Supervision::HandledSignals();
  ::sigprocmask(SIG_BLOCK, &signals, nullptr);
  if (::getsid(0) != self) ::setsid();
  if (std::optional<ProcessIdentity> identity = IdentityOf(self)) {
    (void)WriteFileAtomic(task_dir + "/" + task_files::kSupervisor, identity->Format() + "\n");
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

  Result<std::string> text = ReadWholeFile(task_dir + "/" + task_files::kSpec);
  Result<TaskSpec> spec = text.ok() ? ParseTaskSpec(*text) : Result<TaskSpec>(text.status());
  if (!spec.ok()) {
    return RecordStartFailure(task_dir, "cannot start the task: " + spec.status().message());
  }
  std::vector<char*> argv;
  for (std::string& arg : spec->argv) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (std::string& entry : spec->env) envp.push_back(entry.data());
  envp.push_back(nullptr);

  if (spec->container) {
    // A cancel, or the end of the node's lease, during a pull ends it: the
    // task has not started, so there is nothing else to stop.
    const auto stopped = [&] {
      if (RequestedGrace(task_dir)) return true;
      if (spec->lease_file.empty()) return false;
      const std::optional<SteadyClock::time_point> end = ReadLeaseEnd(spec->lease_file);
      return end && SteadyClock::now() >= *end;
    };
    if (Status image = PrepareImage(task_dir, *spec->container, stopped); !image.ok()) {
      return RecordStartFailure(task_dir, "cannot start the task: " + image.message());
    }
  }
  Result<std::optional<CgroupJoin>> join = PrepareCgroup(*spec);
  if (!join.ok()) {
    return RecordStartFailure(task_dir, "cannot start the task: " + join.status().message());
  }
  const std::optional<TaskCgroup> cgroup = spec->cgroup;
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    const std::string why = std::string("cannot start the task: pipe: ") + std::strerror(errno);
    if (cgroup) (void)RemoveTaskCgroup(*cgroup);
    return RecordStartFailure(task_dir, why);
  }
  const pid_t child = ::fork();
  if (child == 0) {
    JoinCgroup(*join, report[1]);
    ExecTask(*spec, argv, envp, report[1]);
  }
  ::close(report[1]);
  // Kept: step tasks join the task's cgroup through it (step_host.h).
  if (child < 0) {
    const std::string why = std::string("cannot start the task: fork: ") + std::strerror(errno);
    ::close(report[0]);
    if (cgroup) (void)RemoveTaskCgroup(*cgroup);
    return RecordStartFailure(task_dir, why);
  }
  // Both sides set the group, so it exists before anyone signals it.
  ::setpgid(child, child);
  if (std::optional<ProcessIdentity> identity = IdentityOf(child)) {
    (void)WriteFileAtomic(task_dir + "/" + task_files::kTask, identity->Format() + "\n");
  }
  const std::string start_failure = ReadStartFailure(report[0]);
  ::close(report[0]);
  Supervision supervision(task_dir, std::move(*spec), self, *join);
  ExitStatus status = supervision.Run(child);
  if (!start_failure.empty()) {
    status.reason = "start_failed";
    status.message = start_failure;
  }
  if (cgroup) status = SettleCgroup(*cgroup, std::move(status));
  RecordExit(task_dir, std::move(status));
  return 0;
}

}  // namespace berth::agent
