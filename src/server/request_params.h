// What the API's handlers read from a request besides a submission: ids
// from the path, integer and time query parameters, a JSON body, a signal
// body. Every refusal is InvalidArgument naming the parameter and quoting
// what was sent, escaped (spec_text.h).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "core/ids.h"
#include "core/time.h"
#include "http/router.h"

namespace berth::server {

// A job id from the path (its first match).
Result<core::JobId> JobIdFrom(const http::Request& request);
// A step id from the path (its second match).
Result<int32_t> StepIdFrom(const http::Request& request);
// The body as JSON, any JSON.
Result<nlohmann::json> Body(const http::Request& request);
// An integer query parameter in [min, max]; `fallback` when absent.
Result<int64_t> IntParam(const http::Request& request, const std::string& key, int64_t fallback,
                         int64_t min, int64_t max, const std::string& what);
// "from"/"to" query parameters: unix seconds.
Result<core::Time> TimeParam(const http::Request& request, const std::string& key,
                             core::Time fallback);

struct SignalBody {
  std::string signal;  // canonical
  bool batch_only = false;
};
// {"signal": "USR1", "batch_only": true}.
Result<SignalBody> ReadSignalBody(const http::Request& request);

}  // namespace berth::server
