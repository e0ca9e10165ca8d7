#include "cli/signal_option.h"

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>

#include "protocol/signal_name.h"

namespace berth::cli {

namespace {

constexpr int64_t kMaxSeconds = 65535;  // Slurm's bound
constexpr int64_t kDefaultSeconds = 60;

Status BadSignal(std::string_view flag, std::string_view text, std::string_view why) {
  return InvalidArgument(std::string(flag) + ": " + std::string(why) + ", got '" +
                         std::string(text) + "' (expected [B:]SIG[@seconds], e.g. B:USR1@90)");
}

}  // namespace

Result<nlohmann::json> ParseSignalOption(std::string_view text, std::string_view flag) {
  std::string_view rest = text;
  bool batch_only = false;
  if (rest.starts_with("B:") || rest.starts_with("b:")) {
    batch_only = true;
    rest.remove_prefix(2);
  } else if (rest.starts_with("R:") || rest.starts_with("r:")) {
    return BadSignal(flag, text, "R: (a reservation's end) is not supported by Berth");
  }
  int64_t seconds = kDefaultSeconds;
  const size_t at = rest.find('@');
  if (at != std::string_view::npos) {
    const std::string_view digits = rest.substr(at + 1);
    const auto [end, error] =
        std::from_chars(digits.data(), digits.data() + digits.size(), seconds);
    if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() ||
        seconds < 0 || seconds > kMaxSeconds) {
      return BadSignal(flag, text, "the seconds after @ must be 0.." + std::to_string(kMaxSeconds));
    }
    rest = rest.substr(0, at);
  }
  const std::optional<std::string> name = protocol::CanonicalSignalName(rest);
  if (!name) {
    return BadSignal(flag, text, std::string("unknown signal '") + std::string(rest) + "'");
  }
  return nlohmann::json{{"name", *name}, {"before_s", seconds}, {"batch_only", batch_only}};
}

}  // namespace berth::cli
