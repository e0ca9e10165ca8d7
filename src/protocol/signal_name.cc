#include "protocol/signal_name.h"

#include <signal.h>

#include <cctype>
#include <charconv>

namespace berth::protocol {
namespace {

struct Known {
  const char* name;
  int number;
};

// Linux's standard signals, in number order.
constexpr Known kSignals[] = {
    {"HUP", SIGHUP},   {"INT", SIGINT},       {"QUIT", SIGQUIT}, {"ILL", SIGILL},
    {"TRAP", SIGTRAP}, {"ABRT", SIGABRT},     {"BUS", SIGBUS},   {"FPE", SIGFPE},
    {"KILL", SIGKILL}, {"USR1", SIGUSR1},     {"SEGV", SIGSEGV}, {"USR2", SIGUSR2},
    {"PIPE", SIGPIPE}, {"ALRM", SIGALRM},     {"TERM", SIGTERM}, {"STKFLT", SIGSTKFLT},
    {"CHLD", SIGCHLD}, {"CONT", SIGCONT},     {"STOP", SIGSTOP}, {"TSTP", SIGTSTP},
    {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU},     {"URG", SIGURG},   {"XCPU", SIGXCPU},
    {"XFSZ", SIGXFSZ}, {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF}, {"WINCH", SIGWINCH},
    {"IO", SIGIO},     {"PWR", SIGPWR},       {"SYS", SIGSYS},
};

}  // namespace

std::optional<std::string> CanonicalSignalName(std::string_view text) {
  int number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (!text.empty() && error == std::errc() && end == text.data() + text.size()) {
    for (const Known& known : kSignals) {
      if (known.number == number) return std::string(known.name);
    }
    return std::nullopt;
  }
  std::string upper;
  for (char c : text) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper.starts_with("SIG")) upper.erase(0, 3);
  for (const Known& known : kSignals) {
    if (upper == known.name) return upper;
  }
  return std::nullopt;
}

std::optional<int> SignalNumber(std::string_view name) {
  for (const Known& known : kSignals) {
    if (name == known.name) return known.number;
  }
  return std::nullopt;
}

}  // namespace berth::protocol
