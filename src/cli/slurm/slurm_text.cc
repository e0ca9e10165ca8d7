#include "cli/slurm/slurm_text.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <tuple>
#include <utility>

#include "common/hostlist.h"

namespace berth::cli::slurm {

std::string PadField(const std::string& value, int width, Justify justify, Cut cut) {
  if (width <= 0) return value;
  const size_t size = static_cast<size_t>(width);
  std::string text = value;
  // Slurm prints "%*s" or "%.*s" and then cuts to the width: a right-
  // justified value too long keeps its first `width` characters too.
  if (cut == Cut::kYes && text.size() > size) text.resize(size);
  if (text.size() >= size) return text;
  const std::string padding(size - text.size(), ' ');
  return justify == Justify::kRight ? padding + text : text + padding;
}

std::string SlurmDuration(int64_t seconds) {
  constexpr int64_t kYear = 365 * 86400;
  if (seconds < 0 || seconds > kYear) return "INVALID";
  const int64_t days = seconds / 86400;
  const int64_t hours = seconds / 3600 % 24;
  const int64_t minutes = seconds / 60 % 60;
  const int64_t secs = seconds % 60;
  char buffer[64];
  if (days > 0) {
    std::snprintf(buffer, sizeof(buffer), "%lld-%02lld:%02lld:%02lld", static_cast<long long>(days),
                  static_cast<long long>(hours), static_cast<long long>(minutes),
                  static_cast<long long>(secs));
  } else if (hours > 0) {
    std::snprintf(buffer, sizeof(buffer), "%lld:%02lld:%02lld", static_cast<long long>(hours),
                  static_cast<long long>(minutes), static_cast<long long>(secs));
  } else {
    std::snprintf(buffer, sizeof(buffer), "%lld:%02lld", static_cast<long long>(minutes),
                  static_cast<long long>(secs));
  }
  return buffer;
}

std::string SlurmElapsed(int64_t seconds) {
  seconds = std::max<int64_t>(0, seconds);
  const int64_t days = seconds / 86400;
  char buffer[64];
  if (days > 0) {
    std::snprintf(buffer, sizeof(buffer), "%lld-%02lld:%02lld:%02lld", static_cast<long long>(days),
                  static_cast<long long>(seconds / 3600 % 24),
                  static_cast<long long>(seconds / 60 % 60), static_cast<long long>(seconds % 60));
  } else {
    std::snprintf(buffer, sizeof(buffer), "%02lld:%02lld:%02lld",
                  static_cast<long long>(seconds / 3600), static_cast<long long>(seconds / 60 % 60),
                  static_cast<long long>(seconds % 60));
  }
  return buffer;
}

std::string SlurmTime(core::Time time) {
  const std::time_t seconds = static_cast<std::time_t>(time.micros() / 1'000'000);
  std::tm local{};
  ::localtime_r(&seconds, &local);
  char buffer[64];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%S", &local);
  return buffer;
}

std::optional<core::Time> ParseSlurmTime(const std::string& text) {
  std::tm local{};
  int year = 0;
  int month = 0;
  int day = 0;
  int hour = 0;
  int minute = 0;
  int second = 0;
  int used = 0;
  const int fields = std::sscanf(text.c_str(), "%4d-%2d-%2d%n", &year, &month, &day, &used);
  if (fields != 3) return std::nullopt;
  if (static_cast<size_t>(used) != text.size()) {
    int more = 0;
    const int time_fields =
        std::sscanf(text.c_str() + used, "T%2d:%2d%n:%2d%n", &hour, &minute, &more, &second, &more);
    if (time_fields < 2 || static_cast<size_t>(used + more) != text.size()) return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return std::nullopt;
  }
  local.tm_year = year - 1900;
  local.tm_mon = month - 1;
  local.tm_mday = day;
  local.tm_hour = hour;
  local.tm_min = minute;
  local.tm_sec = second;
  local.tm_isdst = -1;
  const std::time_t seconds = std::mktime(&local);
  if (seconds == static_cast<std::time_t>(-1)) return std::nullopt;
  return core::Time::FromMicros(static_cast<int64_t>(seconds) * 1'000'000);
}

namespace {

// "sim12" is {"sim", "12"}; "login" is {"login", ""}.
std::pair<std::string, std::string> SplitNumber(const std::string& name) {
  size_t digits = name.size();
  while (digits > 0 && name[digits - 1] >= '0' && name[digits - 1] <= '9') --digits;
  // Long digit runs (over 18) are kept as text: they would not fit an int64.
  if (name.size() - digits > 18) digits = name.size();
  return {name.substr(0, digits), name.substr(digits)};
}

}  // namespace

std::string CompressHostlist(std::vector<std::string> names) {
  // Slurm lists nodes sorted and once each: by prefix, then number, then
  // the number's written width. Adjacent names then share a bracket.
  auto key = [](const std::string& name) {
    auto [prefix, number] = SplitNumber(name);
    const int64_t value = number.empty() ? -1 : std::stoll(number);
    return std::tuple(std::move(prefix), value, number.size());
  };
  std::sort(names.begin(), names.end(),
            [&](const std::string& a, const std::string& b) { return key(a) < key(b); });
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return berth::CompressHostlist(names);
}

std::string SlurmMemory(int64_t mib) {
  if (mib == 0) return "0";
  static constexpr char kUnits[] = {'M', 'G', 'T', 'P'};
  double value = static_cast<double>(mib);
  size_t unit = 0;
  while (value >= 1024 && static_cast<int64_t>(value) % 512 == 0 && unit + 1 < sizeof(kUnits)) {
    value /= 1024;
    ++unit;
  }
  char buffer[64];
  if (static_cast<double>(static_cast<int64_t>(value)) == value) {
    std::snprintf(buffer, sizeof(buffer), "%lld%c", static_cast<long long>(value), kUnits[unit]);
  } else {
    std::snprintf(buffer, sizeof(buffer), "%.2f%c", value, kUnits[unit]);
  }
  return buffer;
}

}  // namespace berth::cli::slurm
