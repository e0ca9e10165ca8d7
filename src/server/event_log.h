// Structured event logs: one line per thing that happened to a job or a
// node, as logfmt (`event=job_started job=12 node=n0 gpus=0,1`), so
// operators can grep them and log shippers can parse them without a schema.
#pragma once

#include <spdlog/spdlog.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace berth::server {

using LogFields = std::initializer_list<std::pair<std::string_view, std::string>>;

// "key=value ..." with values quoted when they hold spaces, quotes or '='.
std::string Logfmt(std::string_view event, LogFields fields);

inline void LogEvent(std::string_view event, LogFields fields) {
  spdlog::info("{}", Logfmt(event, fields));
}
inline void LogWarning(std::string_view event, LogFields fields) {
  spdlog::warn("{}", Logfmt(event, fields));
}

}  // namespace berth::server
