#include "server/cycle_pacer.h"

#include <cmath>

namespace berth::server {

CyclePacer::Clock::duration CyclePacer::Record(Clock::time_point start, Clock::time_point end,
                                               bool full) {
  // What was busy `gap` ago counts e^(-gap/window) as much as now (before
  // the first cycle nothing was busy, so its gap does not matter).
  const double decay = std::exp(-std::chrono::duration<double>(end - last_end_) / options_.window);
  // A full pass does not count: it comes once per explain interval whatever
  // the load, so it says nothing about whether events saturate the loop.
  // Counted, each one (0.6 s at 10k nodes) kept the loop resting after every
  // event cycle for the next two seconds, while those cycles held the
  // controller well under the bound.
  busy_ = busy_ * decay + (full ? std::chrono::duration<double>::zero()
                                : std::chrono::duration<double>(end - start));
  last_end_ = end;
  const bool saturated = busy_ > options_.window * options_.max_busy_share;
  return saturated && !full ? end - start : Clock::duration::zero();
}

}  // namespace berth::server
