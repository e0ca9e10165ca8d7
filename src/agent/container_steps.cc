#include "agent/container_steps.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>

#include "agent/run_command.h"

namespace berth::agent {
namespace {

// A pull may move gigabytes; the rest are quick.
constexpr auto kPullTimeout = std::chrono::hours(1);
constexpr auto kQuickTimeout = std::chrono::seconds(60);

std::vector<std::string> Runtime(const ContainerSpec& container,
                                 std::initializer_list<std::string> args) {
  std::vector<std::string> argv = container.runtime;
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

bool ImagePresent(const ContainerSpec& container) {
  const std::vector<std::string> argv =
      container.kind == "docker" ? Runtime(container, {"image", "inspect", container.image})
                                 : Runtime(container, {"image", "exists", container.image});
  return RunCommand(argv, kQuickTimeout).exit_code == 0;
}

void Log(const std::string& text) {
  std::fprintf(stderr, "berth: %s\n", text.c_str());
  std::fflush(stderr);
}

// Starts the runtime with `argv` and returns at once; the child's pid.
pid_t StartRuntime(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const pid_t child = ::fork();
  if (child == 0) {
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  return child;
}

}  // namespace

Status PrepareImage(const std::string& task_dir, const ContainerSpec& container,
                    const std::function<bool()>& stopped) {
  const bool present = container.pull != "always" && ImagePresent(container);
  if (present) return Status::Ok();
  if (container.pull == "never") {
    return NotFound("image " + container.image +
                    " is not on this node and its pull policy is never");
  }
  const std::string starting = task_dir + "/" + task_files::kStarting;
  (void)WriteFileAtomic(starting, "pulling image " + container.image + "\n");
  Log("pulling image " + container.image);
  const CommandResult pulled =
      RunCommand(Runtime(container, {"pull", container.image}), kPullTimeout, stopped);
  ::unlink(starting.c_str());
  if (pulled.given_up) {
    return FailedPrecondition("stopped while pulling image " + container.image);
  }
  if (pulled.exit_code != 0) {
    Log(pulled.output);
    return Unavailable("cannot pull image " + container.image + ": " + LastLine(pulled.output));
  }
  return Status::Ok();
}

pid_t StartContainerStop(const ContainerSpec& container, int64_t grace_seconds) {
  return StartRuntime(
      Runtime(container, {"stop", "-t", std::to_string(grace_seconds), container.name}));
}

pid_t StartContainerKill(const ContainerSpec& container, int signal_number) {
  return StartRuntime(
      Runtime(container, {"kill", "--signal", std::to_string(signal_number), container.name}));
}

std::optional<ContainerEnd> InspectContainer(const ContainerSpec& container) {
  const CommandResult inspected = RunCommand(
      Runtime(container,
              {"inspect", "--format", "{{.State.OOMKilled}} {{.State.ExitCode}}", container.name}),
      kQuickTimeout);
  if (inspected.exit_code != 0) return std::nullopt;
  ContainerEnd end;
  const std::string line = LastLine(inspected.output);
  end.oom_killed = line.starts_with("true");
  const size_t space = line.find(' ');
  if (space != std::string::npos) end.exit_code = std::atoi(line.c_str() + space + 1);
  return end;
}

Status RemoveContainer(const ContainerSpec& container) {
  const CommandResult removed =
      RunCommand(Runtime(container, {"rm", "--force", container.name}), kQuickTimeout);
  if (removed.exit_code != 0) {
    return Unavailable("cannot remove container " + container.name + ": " +
                       LastLine(removed.output));
  }
  return Status::Ok();
}

}  // namespace berth::agent
