#include "agent/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace berth::agent {
namespace {

// posix_spawn's attribute and file-action objects, destroyed on every path.
class SpawnSetup {
 public:
  SpawnSetup() {
    ::posix_spawnattr_init(&attributes_);
    ::posix_spawn_file_actions_init(&actions_);
  }
  ~SpawnSetup() {
    ::posix_spawn_file_actions_destroy(&actions_);
    ::posix_spawnattr_destroy(&attributes_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  posix_spawnattr_t* attributes() { return &attributes_; }
  posix_spawn_file_actions_t* actions() { return &actions_; }

 private:
  posix_spawnattr_t attributes_;
  posix_spawn_file_actions_t actions_;
};

Status SpawnError(const char* step, int error) {
  return Unavailable(std::string("spawn: ") + step + ": " + std::strerror(error));
}

}  // namespace

Result<pid_t> SpawnDetached(const SpawnRequest& request) {
  if (request.argv.empty()) return InvalidArgument("spawn: empty argv");
  std::vector<std::string> args = request.argv;
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  SpawnSetup setup;
  sigset_t all_signals;
  sigfillset(&all_signals);
  sigset_t blocked;
  sigemptyset(&blocked);
  for (int signal_number : {SIGTERM, SIGINT, SIGHUP, SIGCHLD}) sigaddset(&blocked, signal_number);
  // The child starts with every signal blocked (glibc blocks them around
  // the clone) and takes this mask at exec: a SIGTERM between the two
  // waits for the supervisor instead of killing it.
  int error = ::posix_spawnattr_setflags(
      setup.attributes(), POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  if (error == 0) error = ::posix_spawnattr_setsigdefault(setup.attributes(), &all_signals);
  if (error == 0) error = ::posix_spawnattr_setsigmask(setup.attributes(), &blocked);
  if (error != 0) return SpawnError("attributes", error);

  error = ::posix_spawn_file_actions_addopen(setup.actions(), 0, "/dev/null", O_RDONLY, 0);
  if (error == 0) {
    error = ::posix_spawn_file_actions_addopen(setup.actions(), 1, request.log_path.c_str(),
                                               O_WRONLY | O_CREAT | O_APPEND, 0644);
  }
  if (error == 0) error = ::posix_spawn_file_actions_adddup2(setup.actions(), 1, 2);
  if (error == 0) error = ::posix_spawn_file_actions_addclosefrom_np(setup.actions(), 3);
  if (error != 0) return SpawnError("file actions", error);

  pid_t pid = -1;
  error = ::posix_spawn(&pid, argv[0], setup.actions(), setup.attributes(), argv.data(), environ);
  if (error != 0) {
    return Unavailable("spawn: cannot start " + request.argv[0] + " (log " + request.log_path +
                       "): " + std::strerror(error));
  }
  return pid;
}

bool ReapIfExited(pid_t pid) {
  int status = 0;
  pid_t reaped = 0;
  do {
    reaped = ::waitpid(pid, &status, WNOHANG);
  } while (reaped < 0 && errno == EINTR);
  return reaped != 0;  // the pid, or -1 (ECHILD: not ours, or already reaped)
}

}  // namespace berth::agent
