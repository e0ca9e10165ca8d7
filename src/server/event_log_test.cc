#include "server/event_log.h"

#include <gtest/gtest.h>

namespace berth::server {
namespace {

TEST(EventLogTest, PlainValuesStayBareAndOthersAreQuoted) {
  EXPECT_EQ(Logfmt("job_started", {{"job", "12"}, {"placement", "n0:0,1"}}),
            "event=job_started job=12 placement=n0:0,1");
  EXPECT_EQ(Logfmt("job_ended", {{"why", "a task failed"}, {"reason", ""}}),
            "event=job_ended why=\"a task failed\" reason=\"\"");
  EXPECT_EQ(Logfmt("x", {{"v", "say \"hi\"\nback\\slash=1"}}),
            "event=x v=\"say \\\"hi\\\"\\nback\\\\slash=1\"");
}

}  // namespace
}  // namespace berth::server
