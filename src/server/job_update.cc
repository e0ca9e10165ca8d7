#include "server/job_update.h"

#include <algorithm>
#include <array>
#include <exception>

#include "common/printable.h"
#include "server/spec_text.h"
#include "server/strict_json.h"

namespace berth::server {
namespace {

using namespace strict_json;  // NOLINT: typed reads of the body's fields
using spec_text::IsQueueName;
using spec_text::kMicrosPerSecond;
using spec_text::Quote;
using spec_text::Range;

Result<int32_t> ReadPriority(const Json& value, int32_t max_priority) {
  static constexpr std::array<std::pair<std::string_view, int32_t>, 3> kClasses = {
      {{"low", -100}, {"normal", 0}, {"high", 100}}};
  const std::string range = Range(-max_priority, max_priority) + " or one of low, normal, high";
  if (const auto* name = value.get_ptr<const Json::string_t*>()) {
    for (const auto& [class_name, priority] : kClasses) {
      if (*name == class_name) return priority;
    }
    return RangeError("priority", range, Quote(*name));
  }
  if (!IsNumber(value)) return TypeError("priority", "an integer or a class name", value);
  const Result<int64_t> number = ReadInteger(value, "priority", -max_priority, max_priority);
  if (!number.ok()) {
    return RangeError("priority", range, Printable(*NumberText(value), spec_text::kQuotedChars));
  }
  return static_cast<int32_t>(*number);
}

Result<JobUpdate> ParseValidatedUpdate(std::string_view json_body, const SubmissionLimits& limits) {
  if (json_body.size() > limits.max_body_bytes) {
    return InvalidArgument("body: " + std::to_string(json_body.size()) + " bytes, limit " +
                           std::to_string(limits.max_body_bytes));
  }
  if (json_body.empty()) return InvalidArgument("body: empty; expected a JSON object");
  BERTH_ASSIGN_OR_RETURN(const Json body, Parse(json_body, limits.max_json_depth));
  if (!body.is_object()) return TypeError("body", "a JSON object", body);
  JobUpdate update;
  for (auto it = body.begin(); it != body.end(); ++it) {
    const std::string& field = it.key();
    const Json& value = it.value();
    if (field == "time_limit_s") {
      const std::string range = "more than 0 and at most " + std::to_string(limits.max_time_s) +
                                " seconds, to the microsecond";
      BERTH_ASSIGN_OR_RETURN(
          int64_t micros,
          ReadDecimal(value, field, 6, 1, limits.max_time_s * kMicrosPerSecond, range));
      update.time_limit = core::Duration::Micros(micros);
    } else if (field == "queue") {
      BERTH_ASSIGN_OR_RETURN(std::string queue, ReadString(value, field, limits.max_string));
      if (!IsQueueName(queue)) {
        return RangeError("queue", "1..64 characters of [A-Za-z0-9._-]", Quote(queue));
      }
      update.queue = std::move(queue);
    } else if (field == "priority") {
      BERTH_ASSIGN_OR_RETURN(update.priority, ReadPriority(value, limits.max_priority));
    } else {
      return InvalidArgument("unknown field " + Quote(field) +
                             " (known: priority, queue, time_limit_s)");
    }
  }
  if (!update.time_limit && !update.queue && !update.priority) {
    return InvalidArgument("body: nothing to change; expected time_limit_s, queue or priority");
  }
  return update;
}

}  // namespace

Result<JobUpdate> ParseJobUpdate(std::string_view json_body, const SubmissionLimits& limits) {
  // nlohmann::json reports failures by exception; none may leave this module.
  try {
    return ParseValidatedUpdate(json_body, limits);
  } catch (const std::exception& e) {
    return Internal("body: the parser failed: " + Printable(e.what(), 160));
  }
}

}  // namespace berth::server
