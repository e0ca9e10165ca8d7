// The small languages inside a submission, shared by the API parser and
// the CLI: Slurm-style array specs and dependency specs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "store/records.h"

namespace berth::server {

// The largest array index allowed is kDefaultMaxArray - 1 unless a caller
// passes its own limit (SubmissionLimits::max_array).
inline constexpr int32_t kDefaultMaxArray = 10000;

// Array specs as Slurm writes them: "0-9", "1,3,5-7", "0-15:4" (step), with an
// optional "%N" (at most N at once). Returns the indices sorted and without
// duplicates, all in 0..max_array-1, and the %N (1..max_array) if given. The
// spec is at most kMaxArraySpecChars long. Messages name no field (the caller
// prefixes its own: `array: `, `--array: `).
inline constexpr size_t kMaxArraySpecChars = 1024;
Result<std::pair<std::vector<int32_t>, std::optional<int32_t>>> ParseArraySpec(
    std::string_view spec, int32_t max_array = kDefaultMaxArray);

// "afterok:12", "afterany:12", "afternotok:12", and "12" meaning afterok;
// also "12:afterok" (the CLI's `--after ID[:KIND]`). Job ids are positive.
// Messages name no field (the caller prefixes its own).
Result<store::Dependency> ParseDependency(std::string_view text);

}  // namespace berth::server
