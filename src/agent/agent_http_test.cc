#include "agent/agent_http.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>

#include "agent/task_dir.h"
#include "agent/testing/test_util.h"
#include "http/testing/raw_connection.h"

namespace berth::agent {
namespace {

using testing::TempDir;

const std::string kKey = "k3y";

class LogsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tasks_ = dir_.path() + "/tasks";
    Write(TaskKey{core::JobId{5}, 0, 1}, "old attempt\n", /*exited=*/true);
    Write(TaskKey{core::JobId{5}, 0, 2}, "0123456789", /*exited=*/false);
  }
  void Write(const TaskKey& key, const std::string& log, bool exited) {
    const std::string dir = tasks_ + "/" + key.DirName();
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/log", std::ios::binary) << log;
    if (exited) std::ofstream(dir + "/exit.json") << "{}";
  }
  LogsReply Get(const std::multimap<std::string, std::string>& params,
                const std::string& key = kKey) {
    return ServeLogs(tasks_, kKey, "Bearer " + key, params);
  }
  // The endpoint over these tasks on a free loopback port.
  std::unique_ptr<AgentHttp> StartEndpoint(std::function<std::string()> metrics = {},
                                           std::function<void()> wake = {}) {
    AgentHttp::Options options;
    options.tasks_dir = tasks_;
    options.logs_key = kKey;
    options.metrics = std::move(metrics);
    options.wake = std::move(wake);
    return AgentHttp::Start(options).value();
  }

  TempDir dir_;
  std::string tasks_;
};

TEST_F(LogsTest, ServesTheLatestAttemptFromAnOffset) {
  LogsReply reply = Get({{"job", "5"}, {"task", "0"}});
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, "0123456789");
  EXPECT_EQ(reply.headers["X-Berth-Log-Size"], "10");
  EXPECT_EQ(reply.headers["X-Berth-Task-Running"], "1");

  reply = Get({{"job", "5"}, {"task", "0"}, {"offset", "7"}});
  EXPECT_EQ(reply.body, "789");
  reply = Get({{"job", "5"}, {"task", "0"}, {"offset", "10"}});
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, "");
  reply = Get({{"job", "5"}, {"task", "0"}, {"offset", "99"}});
  EXPECT_EQ(reply.body, "");
  EXPECT_EQ(reply.headers["X-Berth-Log-Size"], "10");
}

TEST_F(LogsTest, AFinishedTaskSaysSo) {
  Write(TaskKey{core::JobId{6}, 1, 1}, "done\n", /*exited=*/true);
  LogsReply reply = Get({{"job", "6"}, {"task", "1"}});
  EXPECT_EQ(reply.body, "done\n");
  EXPECT_EQ(reply.headers["X-Berth-Task-Running"], "0");
}

TEST_F(LogsTest, AtMostOneMebibytePerReply) {
  Write(TaskKey{core::JobId{7}, 0, 1}, std::string(kMaxLogChunk + 10, 'x'), false);
  LogsReply reply = Get({{"job", "7"}, {"task", "0"}});
  EXPECT_EQ(reply.body.size(), kMaxLogChunk);
  EXPECT_EQ(reply.headers["X-Berth-Log-Size"], std::to_string(kMaxLogChunk + 10));
  reply = Get({{"job", "7"}, {"task", "0"}, {"offset", std::to_string(kMaxLogChunk)}});
  EXPECT_EQ(reply.body.size(), 10u);
}

TEST_F(LogsTest, RefusesWrongKeysBadParametersAndUnknownTasks) {
  EXPECT_EQ(Get({{"job", "5"}, {"task", "0"}}, "wrong").status, 401);
  EXPECT_EQ(ServeLogs(tasks_, kKey, "", {{"job", "5"}, {"task", "0"}}).status, 401);
  EXPECT_EQ(ServeLogs(tasks_, kKey, kKey, {{"job", "5"}, {"task", "0"}}).status, 401);
  EXPECT_EQ(ServeLogs(tasks_, "", "Bearer ", {{"job", "5"}, {"task", "0"}}).status, 401);
  EXPECT_EQ(Get({{"task", "0"}}).status, 400);
  EXPECT_EQ(Get({{"job", "x"}, {"task", "0"}}).status, 400);
  EXPECT_EQ(Get({{"job", "5"}}).status, 400);
  EXPECT_EQ(Get({{"job", "5"}, {"task", "0"}, {"offset", "-1"}}).status, 400);
  EXPECT_EQ(Get({{"job", "5"}, {"task", "1"}}).status, 404);
  EXPECT_EQ(Get({{"job", "8"}, {"task", "0"}}).status, 404);
}

TEST_F(LogsTest, OverHttp) {
  std::unique_ptr<AgentHttp> http =
      StartEndpoint([] { return std::string("berth_agent_tasks_running 1\n"); });
  httplib::Client client("127.0.0.1", http->port());
  httplib::Result reply =
      client.Get("/logs?job=5&task=0&offset=4", {{"Authorization", "Bearer " + kKey}});
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, 200);
  EXPECT_EQ(reply->body, "456789");
  EXPECT_EQ(reply->get_header_value("X-Berth-Log-Size"), "10");
  EXPECT_EQ(reply->get_header_value("X-Berth-Task-Running"), "1");
  reply = client.Get("/logs?job=5&task=0");
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, 401);
  reply = client.Get("/metrics");
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->body, "berth_agent_tasks_running 1\n");
  http->Stop();
}

TEST_F(LogsTest, WakeNeedsTheKey) {
  std::atomic<int> wakes{0};
  std::unique_ptr<AgentHttp> http = StartEndpoint({}, [&wakes] { ++wakes; });
  httplib::Client client("127.0.0.1", http->port());
  httplib::Result reply = client.Post("/wake", {{"Authorization", "Bearer wrong"}}, "", "");
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, 401);
  EXPECT_EQ(wakes, 0);
  reply = client.Post("/wake", {{"Authorization", "Bearer " + kKey}}, "", "");
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, 204);
  EXPECT_EQ(wakes, 1);
  http->Stop();
}

// Issue 31: 40 slow connections took the thread-per-connection endpoint;
// now the server's logs and wake calls are answered beside hundreds.
TEST_F(LogsTest, SlowConnectionsLeaveLogsAndWakeAnswered) {
  std::atomic<int> wakes{0};
  std::unique_ptr<AgentHttp> endpoint = StartEndpoint({}, [&wakes] { ++wakes; });
  std::vector<std::unique_ptr<http::testing::RawConnection>> slow;
  for (int i = 0; i < 300; ++i) {
    slow.push_back(std::make_unique<http::testing::RawConnection>(endpoint->port()));
    ASSERT_TRUE(slow.back()->Send("GET /logs?job=5"));  // a head that never ends
  }
  httplib::Client client("127.0.0.1", endpoint->port());
  client.set_read_timeout(5, 0);
  httplib::Result reply =
      client.Get("/logs?job=5&task=0&offset=4", {{"Authorization", "Bearer " + kKey}});
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->body, "456789");
  reply = client.Post("/wake", {{"Authorization", "Bearer " + kKey}}, "", "");
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, 204);
  EXPECT_EQ(wakes, 1);
  endpoint->Stop();
}

TEST(RandomSecretTest, SixtyFourHexCharactersEachTime) {
  const std::string a = RandomSecret().value();
  const std::string b = RandomSecret().value();
  EXPECT_EQ(a.size(), 64u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace berth::agent
