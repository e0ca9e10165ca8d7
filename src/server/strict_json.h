// Strict JSON for the job API: a parser that keeps decimal numbers exact,
// refuses repeated keys and bounds nesting, and typed reads of its values
// whose errors name the field and what was wrong ("gpus: expected an integer
// in 0..64, got 100"). job_request.cc reads submissions with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace berth::server::strict_json {

using Json = nlohmann::json;

// Parses `text` as nlohmann's own parser does, with three differences: a
// decimal number keeps its text (stored as a `binary` value, which JSON text
// can never produce) so that `"cpus": 0.1` is 100 millicores exactly; a
// repeated key is an error instead of last-one-wins; and nesting deeper than
// `max_depth` is an error. Never throws for bad input.
Result<Json> Parse(std::string_view text, size_t max_depth);

// A value's type and, for numbers, the value itself, as messages say it.
std::string Got(const Json& value);
// JSON numbers: integers as nlohmann reads them, decimals as their text.
bool IsNumber(const Json& value);
// The text of a JSON number as written (integers print exactly), or nullopt
// for any other type.
std::optional<std::string> NumberText(const Json& value);

Status TypeError(std::string_view field, std::string_view expected, const Json& value);
Status RangeError(std::string_view field, std::string_view range, std::string_view got);

// An integer in [lo, hi]; `range` describes the bounds in the message when
// "lo..hi" would not read well.
Result<int64_t> ReadInteger(const Json& value, std::string_view field, int64_t lo, int64_t hi,
                            std::string_view range = {});
// A number, integer or decimal, times 10^scale exactly, within [lo, hi]
// (scaled). `range` says the bounds in the user's units for the message.
Result<int64_t> ReadDecimal(const Json& value, std::string_view field, int scale, int64_t lo,
                            int64_t hi, std::string_view range);
Result<bool> ReadBool(const Json& value, std::string_view field);
// A string of at most `max_bytes`, without NUL (argv, environment and paths
// cannot carry one).
Result<std::string> ReadString(const Json& value, std::string_view field, size_t max_bytes);
// A string shown in tables (name, gpu_type): no control characters.
Result<std::string> ReadLabel(const Json& value, std::string_view field, size_t max_bytes);

}  // namespace berth::server::strict_json
