// A point in time as people write it on a command line (`berth usage
// --from`): unix seconds, a date (2026-12-03, midnight UTC), or an ISO
// 8601 date-time, 2026-12-03T14:30[:05], in UTC without a suffix or with
// `Z`, or with an offset (+02:00, -0530). A space may stand for the `T`.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace berth::cli {

// Unix seconds, or InvalidArgument naming `flag` and the forms it takes.
Result<int64_t> ParseTimeArg(const std::string& text, const std::string& flag);

}  // namespace berth::cli
