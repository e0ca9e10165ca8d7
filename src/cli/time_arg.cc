#include "cli/time_arg.h"

#include <cctype>
#include <optional>

#include "common/time_format.h"

namespace berth::cli {
namespace {

// Reads exactly `digits` digits at `at`, moving past them.
std::optional<int64_t> Digits(const std::string& text, size_t& at, size_t digits) {
  if (at + digits > text.size()) return std::nullopt;
  int64_t value = 0;
  for (size_t i = 0; i < digits; ++i) {
    const char c = text[at + i];
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    value = value * 10 + (c - '0');
  }
  at += digits;
  return value;
}

bool Expect(const std::string& text, size_t& at, char c) {
  if (at >= text.size() || text[at] != c) return false;
  ++at;
  return true;
}

std::optional<int64_t> IsoSeconds(const std::string& text) {
  size_t at = 0;
  const std::optional<int64_t> year = Digits(text, at, 4);
  if (!year || !Expect(text, at, '-')) return std::nullopt;
  const std::optional<int64_t> month = Digits(text, at, 2);
  if (!month || *month < 1 || *month > 12 || !Expect(text, at, '-')) return std::nullopt;
  const std::optional<int64_t> day = Digits(text, at, 2);
  if (!day || *day < 1 || *day > DaysInMonth(*year, static_cast<int>(*month))) return std::nullopt;
  int64_t seconds = DaysFromCivil(*year, static_cast<int>(*month), static_cast<int>(*day)) * 86400;
  if (at == text.size()) return seconds;
  if (!Expect(text, at, 'T') && !Expect(text, at, ' ')) return std::nullopt;
  const std::optional<int64_t> hour = Digits(text, at, 2);
  if (!hour || *hour > 23 || !Expect(text, at, ':')) return std::nullopt;
  const std::optional<int64_t> minute = Digits(text, at, 2);
  if (!minute || *minute > 59) return std::nullopt;
  int64_t second = 0;
  if (Expect(text, at, ':')) {
    const std::optional<int64_t> read = Digits(text, at, 2);
    if (!read || *read > 59) return std::nullopt;
    second = *read;
  }
  seconds += *hour * 3600 + *minute * 60 + second;
  if (at == text.size() || (Expect(text, at, 'Z') && at == text.size())) return seconds;
  // An offset: the local time is that much ahead of UTC.
  const char sign = text[at];
  if (sign != '+' && sign != '-') return std::nullopt;
  ++at;
  const std::optional<int64_t> offset_hours = Digits(text, at, 2);
  if (!offset_hours || *offset_hours > 23) return std::nullopt;
  Expect(text, at, ':');
  const std::optional<int64_t> offset_minutes = Digits(text, at, 2);
  if (!offset_minutes || *offset_minutes > 59 || at != text.size()) return std::nullopt;
  const int64_t offset = *offset_hours * 3600 + *offset_minutes * 60;
  return sign == '+' ? seconds - offset : seconds + offset;
}

}  // namespace

Result<int64_t> ParseTimeArg(const std::string& text, const std::string& flag) {
  if (!text.empty() && text.size() <= 12 &&
      text.find_first_not_of("0123456789") == std::string::npos) {
    return std::stoll(text);
  }
  if (std::optional<int64_t> seconds = IsoSeconds(text)) {
    if (*seconds >= 0) return *seconds;
  }
  return InvalidArgument(flag +
                         ": expected a date (2026-12-03), an ISO date-time "
                         "(2026-12-03T14:30:00Z, 2026-12-03T16:30:00+02:00) or unix seconds, "
                         "got '" +
                         text + "'");
}

}  // namespace berth::cli
