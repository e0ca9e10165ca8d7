#include "agent/step_host.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace berth::agent {

namespace {

// How long a cancelled step task has between SIGTERM and SIGKILL.
constexpr auto kStepStopGrace = std::chrono::seconds(5);

// In the forked child: says why the step task could not start (in its
// output) and exits 127, as a shell does for a command it cannot run.
[[noreturn]] void FailStepStart(const std::string& why) {
  std::fprintf(stderr, "berth: %s\n", why.c_str());
  std::fflush(stderr);
  ::_exit(127);
}

}  // namespace

void StepHost::Poll(bool accepting) {
  if (accepting) {
    for (const StepTaskName& name : ListStepFiles(dir_, ".json")) {
      if (!seen_.contains(name)) Start(name);
    }
  }
  const auto now = std::chrono::steady_clock::now();
  for (auto& [pid, step] : running_) {
    if (!step.cancelled && FileExists(StepFile(dir_, step.name, ".cancel"))) {
      step.cancelled = true;
      step.kill_at = now + kStepStopGrace;
      ::kill(-pid, SIGTERM);
    } else if (step.kill_at && now >= *step.kill_at) {
      ::kill(-pid, SIGKILL);
      step.kill_at.reset();
    }
  }
}

void StepHost::Start(const StepTaskName& name) {
  seen_[name] = true;
  Result<StepRequestFile> request = ReadStepRequest(dir_, name);
  if (!request.ok()) {
    (void)WriteStepExit(dir_, StepTaskExit{name, 127, std::nullopt});
    return;
  }
  // The environment: the task's, then the step's over it.
  std::map<std::string, std::string> env;
  for (const std::string& entry : spec_.env) {
    const size_t equals = entry.find('=');
    if (equals != std::string::npos) env[entry.substr(0, equals)] = entry.substr(equals + 1);
  }
  for (const auto& [key, value] : request->env) env[key] = value;
  std::vector<std::string> env_entries;
  for (const auto& [key, value] : env) env_entries.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (std::string& entry : env_entries) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<char*> argv;
  for (std::string& arg : request->command) argv.push_back(arg.data());
  argv.push_back(nullptr);
  // The output file is the user's, made here (the steps dir is the agent's).
  const std::string out = StepFile(dir_, name, ".out");
  const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd >= 0 && spec_.run_as && ::geteuid() == 0) {
    (void)::fchown(fd, spec_.run_as->uid, spec_.run_as->gid);
  }
  const pid_t child = ::fork();
  if (child == 0) {
    if (join_ && !join_->JoinFromChild()) FailStepStart("cannot join the task's cgroup");
    ::setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
    }
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, STDIN_FILENO);
    if (spec_.run_as) {
      const TaskIdentity& identity = *spec_.run_as;
      const std::vector<gid_t> groups(identity.groups.begin(), identity.groups.end());
      if (::setgroups(groups.size(), groups.data()) != 0 || ::setgid(identity.gid) != 0 ||
          ::setuid(identity.uid) != 0) {
        FailStepStart("cannot become user " + identity.user + ": " + std::strerror(errno));
      }
    }
    if (!spec_.workdir.empty() && ::chdir(spec_.workdir.c_str()) != 0) {
      FailStepStart("cannot enter " + spec_.workdir + ": " + std::strerror(errno));
    }
    environ = envp.data();  // execvp searches the step's own PATH
    ::execvp(argv[0], argv.data());
    FailStepStart(std::string("cannot run ") + argv[0] + ": " + std::strerror(errno));
  }
  if (fd >= 0) ::close(fd);
  if (child < 0) {
    (void)WriteStepExit(dir_, StepTaskExit{name, 127, std::nullopt});
    return;
  }
  ::setpgid(child, child);
  running_[child] = Running{name, false, std::nullopt};
}

bool StepHost::Reaped(pid_t pid, int wait_status) {
  auto it = running_.find(pid);
  if (it == running_.end()) return false;
  StepTaskExit exit{it->second.name, std::nullopt, std::nullopt};
  if (WIFEXITED(wait_status)) exit.exit_code = WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) exit.signal = WTERMSIG(wait_status);
  // Its group may hold what it started: they end with it, as srun's do.
  ::kill(-pid, SIGKILL);
  (void)WriteStepExit(dir_, exit);
  running_.erase(it);
  return true;
}

}  // namespace berth::agent
