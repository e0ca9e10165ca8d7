// Text from a request, made safe to quote in an error message. Header-only:
// the core's parsers and the server's both quote what they refuse.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace berth {

// `text` with every byte that is not printable ASCII written as \xNN, cut to
// at most `max_chars` characters (then "..." follows): messages go into JSON
// responses and onto terminals, and must be short, valid UTF-8 without
// control characters whatever the input was.
inline std::string Printable(std::string_view text, size_t max_chars) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    std::string piece(1, c);
    if (byte < 0x20 || byte >= 0x7f) piece = {'\\', 'x', kHex[byte >> 4], kHex[byte & 15]};
    if (out.size() + piece.size() > max_chars) {
      out += "...";
      break;
    }
    out += piece;
  }
  return out;
}

}  // namespace berth
