#include "cli/table.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>

#include "common/eta_text.h"
#include "common/time_format.h"

namespace berth::cli {

std::string Table::Render(bool color) const {
  std::vector<size_t> widths;
  for (const std::string& header : headers_) widths.push_back(header.size());
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].text.size());
    }
  }
  std::string out;
  auto line = [&](const std::vector<Cell>& cells) {
    for (size_t i = 0; i < cells.size() && i < widths.size(); ++i) {
      const Cell& cell = cells[i];
      const bool last = i + 1 == cells.size();
      if (color && cell.color != nullptr) {
        out += "\033[" + std::string(cell.color) + "m" + cell.text + "\033[0m";
      } else {
        out += cell.text;
      }
      if (!last) out += std::string(widths[i] - cell.text.size() + 2, ' ');
    }
    out += '\n';
  };
  std::vector<Cell> header;
  for (const std::string& text : headers_) header.push_back(Cell{text, "1"});
  line(header);
  for (const auto& row : rows_) line(row);
  return out;
}

bool ColorOutput() { return ::isatty(STDOUT_FILENO) == 1 && std::getenv("NO_COLOR") == nullptr; }

const char* StateColor(const std::string& state) {
  if (state == "running" || state == "succeeded" || state == "up") return "32";
  if (state == "pending" || state == "starting" || state == "draining") return "33";
  if (state == "failed" || state == "timeout" || state == "down") return "31";
  if (state == "held" || state == "cancelled" || state == "completing") return "2";
  return nullptr;
}

std::string ShortDuration(double seconds) {
  const auto s = static_cast<int64_t>(std::max(0.0, seconds));
  char buffer[32];
  if (s < 60) {
    std::snprintf(buffer, sizeof(buffer), "%llds", static_cast<long long>(s));
  } else if (s < 3600) {
    std::snprintf(buffer, sizeof(buffer), "%lldm", static_cast<long long>(s / 60));
  } else if (s < 86400) {
    std::snprintf(buffer, sizeof(buffer), "%lldh%02lldm", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60));
  } else {
    std::snprintf(buffer, sizeof(buffer), "%lldd%02lldh", static_cast<long long>(s / 86400),
                  static_cast<long long>(s / 3600 % 24));
  }
  return buffer;
}

std::optional<core::Time> JsonTime(const nlohmann::json& value) {
  if (!value.is_string()) return std::nullopt;
  return ParseRfc3339(value.get<std::string>());
}

std::string ShortClock(core::Time time) {
  const std::time_t seconds = static_cast<std::time_t>(time.micros() / 1'000'000);
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  std::tm today{};
  ::localtime_r(&seconds, &local);
  ::localtime_r(&now, &today);
  char buffer[32];
  const bool same_day = local.tm_year == today.tm_year && local.tm_yday == today.tm_yday;
  std::strftime(buffer, sizeof(buffer), same_day ? "%H:%M" : "%b %d %H:%M", &local);
  return buffer;
}

namespace {

std::optional<core::Time> TimeField(const nlohmann::json& fields, const char* name) {
  return fields.is_object() && fields.contains(name) ? JsonTime(fields[name]) : std::nullopt;
}

// The local time zone's abbreviation ("CET"), now.
std::string LocalZoneName(std::time_t now_seconds) {
  std::tm local{};
  ::localtime_r(&now_seconds, &local);
  char buffer[16];
  return std::strftime(buffer, sizeof(buffer), "%Z", &local) > 0 ? buffer : "";
}

}  // namespace

std::string EtaSummary(const nlohmann::json& fields, ZoneName zone) {
  const std::optional<core::Time> eta = TimeField(fields, "eta");
  if (!eta) return "";
  const std::time_t now_seconds = std::time(nullptr);
  return EtaText(*eta, TimeField(fields, "eta_low"), TimeField(fields, "eta_high"),
                 core::Time::FromSeconds(now_seconds), ClockZone::kLocal,
                 zone == ZoneName::kShown ? LocalZoneName(now_seconds) : "");
}

std::string FirstEtaSummary(const nlohmann::json& first_eta) {
  const std::optional<core::Time> expected = TimeField(first_eta, "expected");
  const std::optional<core::Time> started = TimeField(first_eta, "started");
  if (!expected || !started) return "";
  const std::time_t now_seconds = std::time(nullptr);
  const core::Time now = core::Time::FromSeconds(now_seconds);
  return EtaText(*expected, TimeField(first_eta, "low"), TimeField(first_eta, "high"), now,
                 ClockZone::kLocal, LocalZoneName(now_seconds)) +
         "; started " + ShortClockAt(*started, now, ClockZone::kLocal) +
         (first_eta.value("kept", false) ? ": right" : ": not within a quarter of the wait") +
         (first_eta.value("inside", false) ? ", inside the 80%" : ", outside the 80%");
}

std::string GpuSummary(const nlohmann::json& job) {
  const int64_t milli = job.value("gpu_milli", int64_t{0});
  const int64_t tasks = job.value("tasks", int64_t{1});
  std::string per_task = milli % 1000 == 0 ? std::to_string(milli / 1000)
                                           : std::to_string(static_cast<double>(milli) / 1000.0);
  if (milli % 1000 != 0) {
    per_task.erase(per_task.find_last_not_of('0') + 1);  // "0.500000" -> "0.5"
  }
  return tasks == 1 ? per_task : std::to_string(tasks) + "x" + per_task;
}

std::string NodeFeatures(const nlohmann::json& node) {
  std::string text;
  const auto add = [&text](const std::string& name) { text += (text.empty() ? "" : ",") + name; };
  if (node.contains("features") && node["features"].is_array()) {
    for (const nlohmann::json& feature : node["features"]) {
      if (feature.is_string()) add(feature.get<std::string>());
    }
  }
  if (node.contains("labels") && node["labels"].is_object()) {
    for (const auto& [key, value] : node["labels"].items()) {
      add(key + "=" + (value.is_string() ? value.get<std::string>() : value.dump()));
    }
  }
  return text.empty() ? "-" : text;
}

std::string ClauseLines(const std::string& sentence, size_t indent) {
  std::string out;
  size_t start = 0;
  while (true) {
    const size_t end = sentence.find("; ", start);
    if (start > 0) out += "\n" + std::string(indent, ' ');
    out += sentence.substr(start, end - start);
    if (end == std::string::npos) return out;
    start = end + 2;
  }
}

}  // namespace berth::cli
