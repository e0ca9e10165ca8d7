#include "agent/run_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace berth::agent {
namespace {

constexpr size_t kMaxOutput = 64 << 10;
// How often `give_up` is asked.
constexpr std::chrono::milliseconds kGiveUpPoll{1000};

}  // namespace

CommandResult RunCommand(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                         const std::function<bool()>& give_up) {
  CommandResult result;
  if (argv.empty()) {
    result.output = "no command";
    return result;
  }
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    result.output = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const pid_t child = ::fork();
  if (child == 0) {
    const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    ::dup2(pipe_fds[1], STDERR_FILENO);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execvp(args[0], args.data());
    const std::string why = std::string("cannot run ") + argv[0] + ": " + std::strerror(errno);
    (void)!::write(STDERR_FILENO, why.data(), why.size());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  if (child < 0) {
    ::close(pipe_fds[0]);
    result.output = std::string("fork: ") + std::strerror(errno);
    return result;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  char buffer[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    if (give_up && give_up()) {
      result.given_up = true;
      break;
    }
    pollfd fd{pipe_fds[0], POLLIN, 0};
    const auto wait = give_up ? std::min(left, kGiveUpPoll) : left;
    const int ready = ::poll(&fd, 1, static_cast<int>(wait.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.output.append(buffer, static_cast<size_t>(n));
    if (result.output.size() > kMaxOutput) {
      result.output.erase(0, result.output.size() - kMaxOutput);
    }
  }
  ::close(pipe_fds[0]);
  if (timed_out || result.given_up) ::kill(child, SIGKILL);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    result.output += "\n(killed after " + std::to_string(timeout.count()) + " ms)";
  } else if (result.given_up) {
    result.output += "\n(killed: given up)";
  } else if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.output += "\n(killed by signal " + std::to_string(WTERMSIG(status)) + ")";
  }
  return result;
}

std::string LastLine(const std::string& output) {
  size_t end = output.size();
  while (end > 0) {
    while (end > 0 &&
           (output[end - 1] == '\n' || output[end - 1] == '\r' || output[end - 1] == ' ')) {
      --end;
    }
    const size_t start = output.rfind('\n', end == 0 ? 0 : end - 1);
    const size_t from = start == std::string::npos ? 0 : start + 1;
    if (end > from) return output.substr(from, end - from);
    if (start == std::string::npos) break;
    end = start;
  }
  return "";
}

}  // namespace berth::agent
