// "host:port" as the server's `listen` and the agent's `--listen` take it.
// Header-only: the server and the agent both parse it, and neither links
// the other.
#pragma once

#include <charconv>
#include <string>
#include <system_error>
#include <utility>

#include "common/status.h"

namespace berth {

// Parses "host:port" (IPv4 or a name; the port 0..65535, 0 for any free
// one). The host is everything before the last colon and must not be
// empty. InvalidArgument names `flag`.
inline Result<std::pair<std::string, int>> ParseListen(const std::string& text,
                                                       const std::string& flag) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return InvalidArgument(flag + ": expected HOST:PORT such as 127.0.0.1:8080, got '" + text +
                           "'");
  }
  int port = -1;
  const std::string port_text = text.substr(colon + 1);
  const auto [end, error] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (error != std::errc() || end != port_text.data() + port_text.size() || port < 0 ||
      port > 65535) {
    return InvalidArgument(flag + ": port must be 0..65535, got '" + port_text + "'");
  }
  return std::make_pair(text.substr(0, colon), port);
}

}  // namespace berth
