// The Gittins index of a job whose size is uncertain, from a sample of the
// sizes of jobs like it (Gittins 1989; Aalto, Ayesta and Righter 2009 for
// M/G/1: serving the job of highest index minimises mean response time).
//
// With attained service a and size S, a quantum Delta of further service
// completes the job with probability P(S - a <= Delta | S > a) at expected
// cost E[min(S - a, Delta) | S > a]. The index is the best ratio of the two
// over Delta; we return its inverse, the rank, in time units (lower goes
// first):
//   rank(a) = inf over Delta of E[min(S - a, Delta) | S > a] / P(S - a <= Delta | S > a).
// For an empirical distribution the infimum is reached at a sample point,
// so one pass over the samples above a answers it.
//
// Its limits are the two classic rules: a known size (one point) gives the
// remaining size (SRPT); a decreasing hazard gives ranks that grow with
// attained service (least attained service first); a memoryless size gives
// the mean whatever a. Where sizes are alike (a rising hazard), a running
// job's rank falls as it runs, so a newcomer does not stop it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/time.h"

namespace berth::core {

// The Gittins rank of a job that attained `attained`, given sizes
// `sorted_sizes` (ascending microseconds), each counted with its weight
// (`weights`, one per size, not negative: a sample where some sizes say
// more than others; only their ratios matter). nullopt when no size of
// positive weight exceeds `attained` (the job outlived its sample).
std::optional<Duration> GittinsRank(std::span<const int64_t> sorted_sizes,
                                    std::span<const double> weights, Duration attained);

// The mean remaining size of a job that attained `attained` over the same
// weighted sample: the weighted mean of size - attained over the sizes
// above it. nullopt when it outlived them all.
std::optional<Duration> MeanRemainingSize(std::span<const int64_t> sorted_sizes,
                                          std::span<const double> weights, Duration attained);

// The remaining size of a job that attained `attained` at `count` evenly
// spread quantiles of the same weighted sample ((i + 0.5) / count for i =
// 0..count-1, ascending): each the least size - attained whose share of the
// weight above `attained`, counting it and the sizes below, reaches its
// level. Empty when it outlived them all. REQUIRES: count >= 1.
std::vector<Duration> RemainingSizeQuantiles(std::span<const int64_t> sorted_sizes,
                                             std::span<const double> weights, Duration attained,
                                             int32_t count);

}  // namespace berth::core
