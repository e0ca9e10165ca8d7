// MASTER_PORT: a port of its own per live job on task 0's node.
#include "server/master_port.h"

#include <gtest/gtest.h>

namespace berth::server {
namespace {

TEST(MasterPortTest, JobsWhosePreferredPortsCollideGetDifferentOnes) {
  constexpr int32_t kRange = kEndMasterPort - kFirstMasterPort;
  // Ids one range apart prefer the same port (as ids 20,000 apart did).
  const int32_t first = ChooseMasterPort(core::JobId{7}, 1, {});
  EXPECT_EQ(ChooseMasterPort(core::JobId{7 + kRange}, 1, {}), first);
  const int32_t second = ChooseMasterPort(core::JobId{7 + kRange}, 1, {first});
  EXPECT_NE(second, first);
  EXPECT_EQ(second, first + 1);
  EXPECT_GE(first, kFirstMasterPort);
  EXPECT_LT(first, kEndMasterPort);
}

TEST(MasterPortTest, WrapsAroundToTheStartOfTheRange) {
  // The job whose preferred port is the last of the range.
  constexpr int32_t kRange = kEndMasterPort - kFirstMasterPort;
  core::JobId last{0};
  for (int64_t id = 1; id <= kRange; ++id) {
    if ((id * 31 + 1) % kRange == kRange - 1) {
      last = core::JobId{id};
      break;
    }
  }
  ASSERT_EQ(ChooseMasterPort(last, 1, {}), kEndMasterPort - 1);
  EXPECT_EQ(ChooseMasterPort(last, 1, {kEndMasterPort - 1}), kFirstMasterPort);
  EXPECT_EQ(ChooseMasterPort(last, 1, {kEndMasterPort - 1, kFirstMasterPort}),
            kFirstMasterPort + 1);
}

}  // namespace
}  // namespace berth::server
