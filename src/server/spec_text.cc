#include "server/spec_text.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace berth::server::spec_text {

std::string Quote(std::string_view text) { return "'" + Printable(text, kQuotedChars) + "'"; }

std::string Range(int64_t lo, int64_t hi) { return std::to_string(lo) + ".." + std::to_string(hi); }

bool IsDigits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<int64_t> SaturatingNumber(std::string_view text) {
  if (!IsDigits(text)) return std::nullopt;
  int64_t value = 0;
  for (char c : text) {
    const int64_t digit = c - '0';
    value = value > (kSaturated - digit) / 10 ? kSaturated : value * 10 + digit;
  }
  return value;
}

bool IsQueueName(std::string_view name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

}  // namespace berth::server::spec_text
