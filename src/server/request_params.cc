#include "server/request_params.h"

#include <charconv>
#include <optional>
#include <string>

#include "common/json_fields.h"
#include "protocol/signal_name.h"
#include "server/spec_text.h"

namespace berth::server {

using nlohmann::json;
using spec_text::Quote;

Result<core::JobId> JobIdFrom(const http::Request& request) {
  const std::string& text = request.matches[1];
  int64_t id = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (error != std::errc() || end != text.data() + text.size() || id < 1) {
    return InvalidArgument("id: expected a job id, got " + Quote(text));
  }
  return static_cast<core::JobId>(id);
}

Result<int32_t> StepIdFrom(const http::Request& request) {
  const std::string& text = request.matches[2];
  int32_t id = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (error != std::errc() || end != text.data() + text.size() || id < 0) {
    return InvalidArgument("step: expected a step id, got " + Quote(text));
  }
  return id;
}

Result<json> Body(const http::Request& request) {
  json body = json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return InvalidArgument("body: invalid JSON");
  return body;
}

Result<int64_t> IntParam(const http::Request& request, const std::string& key, int64_t fallback,
                         int64_t min, int64_t max, const std::string& what) {
  if (!request.HasParam(key)) return fallback;
  const std::string value = request.Param(key);
  int64_t number = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (error != std::errc() || end != value.data() + value.size() || number < min || number > max) {
    return InvalidArgument(key + ": expected " + what + ", got " + Quote(value));
  }
  return number;
}

Result<core::Time> TimeParam(const http::Request& request, const std::string& key,
                             core::Time fallback) {
  BERTH_ASSIGN_OR_RETURN(int64_t seconds,
                         IntParam(request, key, fallback.micros() / 1000000, INT64_MIN / 1000000,
                                  INT64_MAX / 1000000, "unix seconds"));
  return core::Time::FromSeconds(seconds);
}

Result<SignalBody> ReadSignalBody(const http::Request& request) {
  BERTH_ASSIGN_OR_RETURN(json body, Body(request));
  JsonFields fields(body, "");
  BERTH_RETURN_IF_ERROR(fields.CheckObject());
  SignalBody out;
  BERTH_ASSIGN_OR_RETURN(std::string name, fields.String("signal", true));
  BERTH_ASSIGN_OR_RETURN(out.batch_only, fields.Bool("batch_only", false));
  BERTH_RETURN_IF_ERROR(fields.Finish());
  std::optional<std::string> canonical = protocol::CanonicalSignalName(name);
  if (!canonical) {
    return InvalidArgument(std::string("signal: expected ") + protocol::kSignalExpected + ", got " +
                           Quote(name));
  }
  out.signal = *canonical;
  return out;
}

}  // namespace berth::server
