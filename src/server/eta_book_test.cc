// The server's own judgement of its first ETAs (issue 30): the share inside
// the 80% interval, and the share right by the simulator's rule.
#include "server/eta_book.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <vector>

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

// A restarted server's book learns the first ETAs judged before it, read
// back from their jobs, and tells what the old book told: here every start
// came at twice the promised wait. Only the window's worth, the latest
// starts, is learned; the accuracy counts start again.
TEST(EtaBookTest, ALearnedBookGoesOnFromTheEtasJudgedBeforeARestart) {
  core::EtaCalibratorConfig config;
  config.window = 60;
  EtaBook before(nullptr, config);
  std::vector<store::FirstEtaRecord> judged;
  for (int64_t i = 1; i <= 70; ++i) {
    const core::JobId job{i};
    before.Give(job, At(i), At(i + 1000), std::nullopt);
    judged.push_back(*before.FirstEta(job, At(i + 2000)));
    before.Judge(job, At(i + 2000));
  }
  ASSERT_EQ(before.FirstEta(core::JobId{1}, At(2001))->planned, At(1001));
  std::reverse(judged.begin(), judged.end());  // the store's order is not the starts'

  EtaBook after(nullptr, config);
  const core::EtaEstimate prior = after.Give(core::JobId{100}, At(5000), At(6000), std::nullopt);
  EXPECT_EQ(prior.expected, At(6000)) << "no judged ETA yet: the plan's own";
  after.Learn(judged);
  const core::EtaEstimate learned = after.Give(core::JobId{101}, At(5000), At(6000), std::nullopt);
  EXPECT_EQ(learned, before.Give(core::JobId{101}, At(5000), At(6000), std::nullopt));
  EXPECT_EQ(learned.expected, At(7000));
  EXPECT_EQ(after.accuracy().calibrated_on, 60);
  EXPECT_EQ(after.accuracy().judged, 0);
  EXPECT_EQ(before.accuracy().judged, 70);
}

}  // namespace
}  // namespace berth::server
