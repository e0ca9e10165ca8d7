// The server's own judgement of its first ETAs (issue 30): the share inside
// the 80% interval, and the share right by the simulator's rule.
#include "server/eta_book.h"

#include <gtest/gtest.h>

#include <optional>

namespace berth::server {
namespace {

core::Time At(int64_t seconds) { return core::Time::FromSeconds(seconds); }

// Before the calibrator has judged 50 ETAs the point shown is the plan's:
// a two-hour promise is right from 1.5 h to 2.5 h, not at half an hour.
TEST(EtaBookTest, AFirstEtaIsKeptWithinAQuarterOfItsWaitOrTenMinutes) {
  EtaBook book(nullptr);
  book.Give(core::JobId{1}, At(0), At(7200), std::nullopt);
  book.Give(core::JobId{2}, At(0), At(7200), std::nullopt);
  book.Give(core::JobId{3}, At(100), At(400), std::nullopt);
  book.Judge(core::JobId{1}, At(1800));  // 1.5 h early
  book.Judge(core::JobId{2}, At(8000));  // 800 s late: within 30 min
  book.Judge(core::JobId{3}, At(950));   // 550 s late: within 10 min
  book.Judge(core::JobId{3}, At(5000));  // a later start is not judged again
  const EtaBook::Accuracy accuracy = book.accuracy();
  EXPECT_EQ(accuracy.judged, 3);
  EXPECT_EQ(accuracy.kept, 2);
}

}  // namespace
}  // namespace berth::server
