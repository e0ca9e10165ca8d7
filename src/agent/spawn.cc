#include "agent/spawn.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace berth::agent {
namespace {

void WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    size -= static_cast<size_t>(n);
  }
}

// The grandchild: becomes the supervisor. Async-signal-safe calls only.
[[noreturn]] void BecomeSupervisor(char* const* argv, int null_fd, int log_fd,
                                   const char* failure_tmp, const char* failure_path,
                                   const std::string& failure_content) {
  ::setsid();
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
    if (signal_number == SIGKILL || signal_number == SIGSTOP) continue;
    ::sigaction(signal_number, &default_action, nullptr);
  }
  sigset_t blocked;
  sigemptyset(&blocked);
  for (int signal_number : {SIGTERM, SIGINT, SIGHUP, SIGCHLD}) sigaddset(&blocked, signal_number);
  ::sigprocmask(SIG_SETMASK, &blocked, nullptr);
  ::dup2(null_fd, 0);
  ::dup2(log_fd, 1);
  ::dup2(log_fd, 2);
  ::syscall(SYS_close_range, 3U, ~0U, 0U);
  ::execve(argv[0], argv, environ);
  const int error = errno;
  const int fd = ::open(failure_tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    WriteAll(fd, failure_content.data(), failure_content.size());
    ::close(fd);
    ::rename(failure_tmp, failure_path);
  }
  const char* message = "berth: cannot start the supervisor: ";
  WriteAll(2, message, std::strlen(message));
  const char* why = ::strerror(error);  // not async-signal-safe in theory; a message at worst
  WriteAll(2, why, std::strlen(why));
  WriteAll(2, "\n", 1);
  ::_exit(127);
}

}  // namespace

Result<pid_t> SpawnDetached(const SpawnRequest& request) {
  if (request.argv.empty()) return InvalidArgument("spawn: empty argv");
  // Everything the children need is prepared before fork.
  std::vector<std::string> args = request.argv;
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const std::string failure_tmp = request.exec_failure_path + ".tmp";

  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) return Unavailable(std::string("spawn: /dev/null: ") + std::strerror(errno));
  const int log_fd =
      ::open(request.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    const int error = errno;
    ::close(null_fd);
    return Unavailable("spawn: cannot open " + request.log_path + ": " + std::strerror(error));
  }
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    const int error = errno;
    ::close(null_fd);
    ::close(log_fd);
    return Unavailable(std::string("spawn: pipe: ") + std::strerror(error));
  }
  // The stop signals are blocked before fork, not after: a SIGTERM that
  // comes between fork and exec must wait for the supervisor, not kill it.
  sigset_t blocked;
  sigset_t previous;
  sigemptyset(&blocked);
  for (int signal_number : {SIGTERM, SIGINT, SIGHUP, SIGCHLD}) sigaddset(&blocked, signal_number);
  ::pthread_sigmask(SIG_BLOCK, &blocked, &previous);
  const pid_t middle = ::fork();
  if (middle == 0) {
    ::close(pipe_fds[0]);
    const pid_t supervisor = ::fork();
    if (supervisor == 0) {
      BecomeSupervisor(argv.data(), null_fd, log_fd, failure_tmp.c_str(),
                       request.exec_failure_path.c_str(), request.exec_failure_content);
    }
    WriteAll(pipe_fds[1], reinterpret_cast<const char*>(&supervisor), sizeof(supervisor));
    ::_exit(supervisor > 0 ? 0 : 1);
  }
  const int fork_error = errno;
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  ::close(pipe_fds[1]);
  ::close(null_fd);
  ::close(log_fd);
  if (middle < 0) {
    ::close(pipe_fds[0]);
    return Unavailable(std::string("spawn: fork: ") + std::strerror(fork_error));
  }
  pid_t supervisor = -1;
  size_t got = 0;
  while (got < sizeof(supervisor)) {
    const ssize_t n =
        ::read(pipe_fds[0], reinterpret_cast<char*>(&supervisor) + got, sizeof(supervisor) - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(middle, &status, 0) < 0 && errno == EINTR) {
  }
  if (got != sizeof(supervisor) || supervisor <= 0) {
    return Unavailable("spawn: the supervisor could not be forked");
  }
  return supervisor;
}

}  // namespace berth::agent
