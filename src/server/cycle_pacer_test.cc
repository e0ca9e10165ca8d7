// The scheduler loop's rests: none while cycles leave the controller mostly
// free, as long as the last cycle once they hold it more than 30% of the
// time, and none after a full pass, whose time does not count.
#include "server/cycle_pacer.h"

#include <gtest/gtest.h>

namespace berth::server {
namespace {

using std::chrono::milliseconds;
// Not `Clock`: in a unity build this file shares a translation unit with
// tests that name berth::Clock.
using PacerClock = CyclePacer::Clock;

// Runs `count` cycles of `length`, one starting every `period`, from `from`;
// returns the rest after the last one.
PacerClock::duration RunCycles(CyclePacer& pacer, PacerClock::time_point& now, int count,
                               milliseconds length, milliseconds period, bool full = false) {
  PacerClock::duration rest{};
  for (int i = 0; i < count; ++i) {
    rest = pacer.Record(now, now + length, full);
    now += period;
  }
  return rest;
}

TEST(CyclePacerTest, ACycleAfterAQuietSpellSetsNoRest) {
  CyclePacer pacer;
  PacerClock::time_point now{};
  EXPECT_EQ(pacer.Record(now, now + milliseconds(20), false), PacerClock::duration::zero());
}

TEST(CyclePacerTest, CyclesThatLeaveTheControllerMostlyFreeNeverRest) {
  // 3 ms every 30 ms: busy a tenth of the time, as at 1,000 nodes.
  CyclePacer pacer;
  PacerClock::time_point now{};
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(RunCycles(pacer, now, 1, milliseconds(3), milliseconds(30)),
              PacerClock::duration::zero())
        << "cycle " << i;
  }
  EXPECT_LT(pacer.busy().count(), 0.15);
}

TEST(CyclePacerTest, BackToBackCyclesRestAsLongAsTheLastCycleOnceSaturated) {
  CyclePacer pacer;
  PacerClock::time_point now{};
  // 10 ms cycles with no gap: after a third of a window of them the loop
  // rests.
  EXPECT_EQ(RunCycles(pacer, now, 10, milliseconds(10), milliseconds(10)),
            PacerClock::duration::zero());
  EXPECT_EQ(RunCycles(pacer, now, 100, milliseconds(10), milliseconds(10)), milliseconds(10));
  // Resting as long as each cycle (10 ms on, 10 ms off) holds it at the
  // bound: it keeps resting, and the controller is free half the time.
  EXPECT_EQ(RunCycles(pacer, now, 200, milliseconds(10), milliseconds(20)), milliseconds(10));
  EXPECT_NEAR(pacer.busy().count(), 0.5, 0.02);
}

TEST(CyclePacerTest, CyclesHoldingTheControllerUnderHalfTheTimeRestOnceOverThreeTenths) {
  // 4 ms every 10 ms, as the event cycles at 10,000 nodes: under half the
  // time, but enough that back-to-back cycles and the heartbeats they keep
  // waiting slow each other down, so the loop rests as long as each cycle.
  CyclePacer pacer;
  PacerClock::time_point now{};
  EXPECT_EQ(RunCycles(pacer, now, 300, milliseconds(4), milliseconds(10)), milliseconds(4));
}

TEST(CyclePacerTest, TheRestEndsWhenTheLoadDoes) {
  CyclePacer pacer;
  PacerClock::time_point now{};
  ASSERT_EQ(RunCycles(pacer, now, 200, milliseconds(10), milliseconds(10)), milliseconds(10));
  // After two quiet seconds the share has decayed below half.
  now += std::chrono::seconds(2);
  EXPECT_EQ(pacer.Record(now, now + milliseconds(10), false), PacerClock::duration::zero());
}

TEST(CyclePacerTest, AFullPassSetsNoRestEvenWhenSaturated) {
  CyclePacer pacer;
  PacerClock::time_point now{};
  ASSERT_EQ(RunCycles(pacer, now, 200, milliseconds(10), milliseconds(10)), milliseconds(10));
  EXPECT_EQ(RunCycles(pacer, now, 1, milliseconds(300), milliseconds(300), /*full=*/true),
            PacerClock::duration::zero());
  // The event cycles' own load still saturates the loop: the next one rests.
  EXPECT_EQ(RunCycles(pacer, now, 1, milliseconds(10), milliseconds(10)), milliseconds(10));
}

TEST(CyclePacerTest, AFullPassDoesNotMakeTheEventCyclesAfterItRest) {
  // Event cycles busy a fifth of the time, under the bound, and a full pass
  // of 600 ms among them: the cycles after it still do not rest.
  CyclePacer pacer;
  PacerClock::time_point now{};
  ASSERT_EQ(RunCycles(pacer, now, 300, milliseconds(3), milliseconds(15)),
            PacerClock::duration::zero());
  ASSERT_EQ(RunCycles(pacer, now, 1, milliseconds(600), milliseconds(600), /*full=*/true),
            PacerClock::duration::zero());
  for (int i = 0; i < 200; ++i) {
    ASSERT_EQ(RunCycles(pacer, now, 1, milliseconds(3), milliseconds(15)),
              PacerClock::duration::zero())
        << "cycle " << i << " after the full pass";
  }
}

}  // namespace
}  // namespace berth::server
