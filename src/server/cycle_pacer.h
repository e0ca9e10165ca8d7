// CyclePacer: how long the scheduler loop rests after a cycle before the
// next one may start.
//
// Each cycle holds the controller's lock, so back-to-back cycles under a
// steady stream of events would keep submits and heartbeats waiting. Resting
// as long as the last cycle took bounds the loop to half the controller's
// time, but a rest also delays every event that arrives during or just after
// a cycle by that much: at 1,000 nodes, where the loop is busy about a tenth
// of the time, resting after every cycle was a third of the event-to-decision
// p99. So the loop rests only while it is busy: when the cycles of the last
// `window` (exponentially weighted) took more than `max_busy_share` of it.
// Why 30% and not half: at 10,000 nodes the event cycles hold the
// controller 40-50% of the time, so with a bound of half the loop hardly
// rested and cycles ran back to back on CPUs shared with the heartbeat
// handlers; its slowest cycles were slower, and each event waited for one
// of them (interleaved runs, docs/performance.md "How busy the loop may be":
// event-to-decision p99 24-37 ms with 0.3, 22-64 ms with 0.5, lower with 0.3
// in three rounds of four). At 1,000 nodes (busy a tenth) it never rests
// with either. A full pass (one every explain_every) sets no rest, and its
// time is not counted: resting as long as one would only delay the events
// it kept waiting, and counting it would make the event cycles after it
// rest.
//
// Not thread-safe: the scheduler loop's own. Pure: time comes in as values.
#pragma once

#include <chrono>

namespace berth::server {

class CyclePacer {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    std::chrono::duration<double> window{1.0};
    double max_busy_share = 0.3;
  };

  CyclePacer() : CyclePacer(Options{}) {}
  explicit CyclePacer(Options options) : options_(options) {}

  // Records a cycle that ran from `start` to `end` (a full pass or not) and
  // returns how long to rest after `end` before the next cycle.
  Clock::duration Record(Clock::time_point start, Clock::time_point end, bool full);

  // Cycle time in the last window, exponentially weighted.
  std::chrono::duration<double> busy() const { return busy_; }

 private:
  Options options_;
  std::chrono::duration<double> busy_{0};
  Clock::time_point last_end_{};
};

}  // namespace berth::server
