// Several servers on one PostgreSQL database (BERTH_TEST_PG_URL): one leads,
// the others stand by, answer with a 503 naming the leader, and take over
// when it goes. (tests/failover_test.py kills and pauses real processes.)
#include "server/leadership.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/testing/free_port.h"
#include "common/testing/temp_dir.h"
#include "server/server.h"
#include "store/store_test_fixture.h"

namespace berth::server {
namespace {

using test_support::FreePort;

using namespace std::chrono_literals;  // NOLINT: durations read as 30s, 50ms

class LeadershipTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Status status = database_.SetUp();
    ASSERT_TRUE(status.ok()) << status.ToString();
  }

  // A lease far longer than the test's waits: a standby that takes over
  // within them does so because the leader gave the lease up.
  ServerOptions Options(const test_support::TempDir& dir, int port) {
    ServerOptions options;
    options.data_dir = dir.path();
    options.postgres_url = database_.conninfo();
    options.listen = "127.0.0.1:" + std::to_string(port);
    options.leader_lease = 30s;
    options.tick = 50ms;
    return options;
  }

  static std::string Token(const test_support::TempDir& dir) {
    std::ifstream in(dir.path() + "/admin-token");
    std::string token;
    std::getline(in, token);
    return token;
  }

  store::store_testing::PostgresBackend database_;
  ManualClock clock_;
};

TEST_F(LeadershipTest, AStandbyNamesTheLeaderAndTakesOverWhenItStops) {
  test_support::TempDir a_dir;
  test_support::TempDir b_dir;
  Result<std::unique_ptr<Server>> a = Server::Start(Options(a_dir, 0), clock_);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const std::string token = Token(a_dir);
  ASSERT_FALSE(token.empty());
  httplib::Headers auth{{"Authorization", "Bearer " + token}};
  httplib::Client to_a("127.0.0.1", (*a)->port());
  httplib::Result submitted =
      to_a.Post("/api/v1/jobs", auth, R"({"command": ["true"], "gpus": 0})", "application/json");
  ASSERT_TRUE(submitted && submitted->status == 201);

  // b stands by: Start returns only once it leads.
  const int b_port = FreePort();
  std::future<Result<std::unique_ptr<Server>>> b =
      std::async(std::launch::async, [&] { return Server::Start(Options(b_dir, b_port), clock_); });
  httplib::Client to_b("127.0.0.1", b_port);
  // Until it has found the leader it answers 503 too, naming none.
  httplib::Result answer = to_b.Get("/api/v1/jobs", auth);
  for (int i = 0; i < 100 && !(answer && answer->has_header("X-Berth-Leader")); ++i) {
    std::this_thread::sleep_for(50ms);
    answer = to_b.Get("/api/v1/jobs", auth);
  }
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 503);
  EXPECT_EQ(answer->get_header_value("X-Berth-Leader"), (*a)->url());
  EXPECT_NE(answer->body.find("the leader is " + (*a)->url()), std::string::npos) << answer->body;
  EXPECT_EQ(b.wait_for(1500ms), std::future_status::timeout);  // a renews

  // a stops cleanly and gives the lease up: b leads at once (not after the
  // 30 s lease), with a's jobs.
  a->reset();
  ASSERT_EQ(b.wait_for(5s), std::future_status::ready);
  Result<std::unique_ptr<Server>> b_server = b.get();
  ASSERT_TRUE(b_server.ok()) << b_server.status().ToString();
  EXPECT_EQ((*b_server)->port(), b_port);
  httplib::Result jobs = to_b.Get("/api/v1/jobs", auth);
  ASSERT_TRUE(jobs);
  EXPECT_EQ(jobs->status, 200);
  EXPECT_NE(jobs->body.find(R"("command":["true"])"), std::string::npos) << jobs->body;
}

TEST(WaitForDatabaseTest, RetriesWhileUnavailableAndStopsWhenToldTo) {
  int tries = 0;
  Status status = WaitForDatabase(
      [&] { return ++tries < 3 ? Unavailable("not yet") : Status::Ok(); }, [] { return true; });
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(tries, 3);
  tries = 0;
  status =
      WaitForDatabase([&] { return ++tries == 1 ? Unavailable("no") : InvalidArgument("bad"); },
                      [] { return true; });
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  status = WaitForDatabase([] { return Unavailable("never"); }, [] { return false; });
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(status.message(), "stopped while waiting for the database");
}

}  // namespace
}  // namespace berth::server
