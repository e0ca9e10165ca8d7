// Text helpers the submission parsers share (job_request.cc, job_specs.cc,
// job_update.cc):
// how values are quoted in error messages, and digits read without ever
// overflowing. Internal to the server's parsers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/printable.h"

namespace berth::server::spec_text {

// At most this many characters of a value are quoted in a message.
inline constexpr size_t kQuotedChars = 64;

// common/printable.h
using berth::Printable;
// 'text', made printable and cut to kQuotedChars.
std::string Quote(std::string_view text);
// "lo..hi"
std::string Range(int64_t lo, int64_t hi);
bool IsDigits(std::string_view text);
// The queue names a submission (and an update) accepts: 1-64 of [A-Za-z0-9._-].
bool IsQueueName(std::string_view name);

// Time limits are read in seconds with up to six decimals, kept in microseconds.
inline constexpr int64_t kMicrosPerSecond = 1'000'000;

// Above every limit; where a long run of digits saturates.
inline constexpr int64_t kSaturated = int64_t{1} << 62;
// Job ids stay below the saturation point so that every id a user can write
// is either exact or rejected.
inline constexpr int64_t kMaxJobId = kSaturated - 1;

// Digits as int64, saturating at kSaturated so that "99999999999999999999"
// is "over the limit", not malformed. nullopt unless `text` is all digits.
std::optional<int64_t> SaturatingNumber(std::string_view text);

}  // namespace berth::server::spec_text
