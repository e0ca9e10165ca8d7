#include "cli/daemon_commands.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "common/check.h"

namespace berth::cli {

namespace {

const DaemonCommand* FindDaemonCommand(std::string_view name) {
  for (const DaemonCommand& command : kDaemonCommands) {
    if (name == command.name) return &command;
  }
  return nullptr;
}

}  // namespace

const char* DaemonDescription(std::string_view name) {
  const DaemonCommand* command = FindDaemonCommand(name);
  BERTH_CHECK(command != nullptr) << "not a daemon command: " << name;
  return command->description;
}

void ExecDaemonIfAsked(int argc, char** argv) {
  if (argc < 2 || FindDaemonCommand(argv[1]) == nullptr) return;
  // Beside the binary itself, however it was started (a link in PATH
  // included): /proc/self/exe is the file, not the name it was run by.
  std::error_code error;
  const std::string berthd =
      std::filesystem::read_symlink("/proc/self/exe", error).parent_path() / "berthd";
  ::execv(berthd.c_str(), argv);
  std::fprintf(stderr, "berth %s: cannot run %s: %s (berthd is installed beside berth)\n", argv[1],
               berthd.c_str(), std::strerror(errno));
  std::exit(127);  // as a shell does for a command it cannot run
}

void AddDaemonCommands(CLI::App& app) {
  for (const DaemonCommand& command : kDaemonCommands) {
    app.add_subcommand(command.name, command.description)->allow_extras();
  }
}

}  // namespace berth::cli
