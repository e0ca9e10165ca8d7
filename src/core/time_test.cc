#include "core/time.h"

#include <gtest/gtest.h>

#include <optional>

namespace berth::core {
namespace {

TEST(KeepEarliest, SetsAnUnsetTimeAndLowersOnlyToAnEarlierOne) {
  std::optional<Time> earliest;
  KeepEarliest(earliest, Time::FromSeconds(20));
  EXPECT_EQ(earliest, Time::FromSeconds(20)) << "unset: the first candidate";
  KeepEarliest(earliest, Time::FromSeconds(30));
  EXPECT_EQ(earliest, Time::FromSeconds(20)) << "a later candidate leaves it";
  KeepEarliest(earliest, Time::FromSeconds(10));
  EXPECT_EQ(earliest, Time::FromSeconds(10)) << "an earlier candidate lowers it";
}

}  // namespace
}  // namespace berth::core
