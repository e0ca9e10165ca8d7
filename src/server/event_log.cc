#include "server/event_log.h"

namespace berth::server {

std::string Logfmt(std::string_view event, LogFields fields) {
  std::string line = "event=" + std::string(event);
  for (const auto& [key, value] : fields) {
    line += ' ';
    line += key;
    line += '=';
    const bool quote = value.empty() || value.find_first_of(" \"=\t\n") != std::string::npos;
    if (!quote) {
      line += value;
      continue;
    }
    line += '"';
    for (char c : value) {
      if (c == '"' || c == '\\') line += '\\';
      if (c == '\n') {
        line += "\\n";
        continue;
      }
      line += c;
    }
    line += '"';
  }
  return line;
}

}  // namespace berth::server
