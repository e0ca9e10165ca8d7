// The rank an orderer gives a job: smaller keys go first, equal keys fall
// back to the job id. Integers (scores are scaled and rounded once), so no
// platform's floating-point quirks can reorder jobs between two runs.
#pragma once

#include <compare>
#include <cstdint>

namespace berth::core {

struct OrderKey {
  int64_t primary = 0;
  int64_t secondary = 0;
  int64_t tertiary = 0;
  constexpr auto operator<=>(const OrderKey&) const = default;
};

}  // namespace berth::core
