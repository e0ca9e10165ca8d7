// LeaderFollower against fakes on 127.0.0.1 (issue 32): a standby that
// names the leader, one that does not, a closed port, a server that drops
// the connection before answering, and a leader that answers.
#include "follow/leader_follower.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "common/testing/free_port.h"
#include "follow/testing/fake_server.h"

namespace berth::follow {
namespace {

using std::chrono::milliseconds;

using test_support::FreePort;
using testing::FakeServer;
using testing::Leader;
using testing::StandbyOf;

// A port nothing listens on.
std::string ClosedPort() { return "http://127.0.0.1:" + std::to_string(FreePort()); }

// Accepts connections, reads what comes and closes without a word: an
// answer lost after the request arrived.
class Dropper {
 public:
  Dropper() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    EXPECT_EQ(::listen(fd_, 16), 0);
    socklen_t length = sizeof(address);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] {
      while (!stop_) {
        pollfd ready{fd_, POLLIN, 0};
        if (::poll(&ready, 1, 20) <= 0) continue;
        const int client = ::accept(fd_, nullptr, nullptr);
        if (client < 0) continue;
        char buffer[4096];
        pollfd readable{client, POLLIN, 0};
        if (::poll(&readable, 1, 1000) > 0 && ::read(client, buffer, sizeof(buffer)) > 0) ++calls_;
        ::close(client);
      }
    });
  }
  ~Dropper() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int calls() const { return calls_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> calls_{0};
  std::thread thread_;
};

FollowOptions Quick() {
  FollowOptions options;
  options.patience = milliseconds(600);
  options.first_backoff = milliseconds(20);
  options.max_backoff = milliseconds(100);
  options.configure = [](httplib::Client& client) { client.set_connection_timeout(1, 0); };
  return options;
}

Result<httplib::Response> Get(LeaderFollower& follower, Replay replay = Replay::kSafe) {
  return follower.Request([](httplib::Client& client) { return client.Get("/api/v1/jobs"); },
                          replay);
}

TEST(ParseServerListTest, SplitsOnCommasAddsTheSchemeAndDropsASlash) {
  Result<std::vector<std::string>> list =
      ParseServerList(" a:1 ,https://b:2/,http://c:3", "--server");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(*list, (std::vector<std::string>{"http://a:1", "https://b:2", "http://c:3"}));
  EXPECT_EQ(JoinServerList(*list), "http://a:1,https://b:2,http://c:3");
}

TEST(ParseServerListTest, AnEmptyItemIsRefusedNamingTheFlag) {
  for (const std::string text : {"", "a:1,,b:2", "a:1,", " "}) {
    Result<std::vector<std::string>> list = ParseServerList(text, "--server");
    ASSERT_FALSE(list.ok()) << text;
    EXPECT_EQ(list.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(list.status().message().find("--server"), std::string::npos);
  }
}

TEST(LeaderFollowerTest, AStandbyNamingTheLeaderIsFollowedAndTheLeaderKept) {
  FakeServer leader(Leader);
  FakeServer standby(StandbyOf(leader.url()));
  LeaderFollower follower({standby.url(), leader.url()}, Quick());
  for (int i = 0; i < 3; ++i) {
    Result<httplib::Response> response = Get(follower);
    ASSERT_TRUE(response.ok()) << response.status().ToString();
    EXPECT_EQ(response->status, 200);
  }
  EXPECT_EQ(follower.current(), leader.url());
  EXPECT_EQ(standby.calls(), 1);  // asked once; then the leader, which answered
  EXPECT_EQ(leader.calls(), 3);
}

TEST(LeaderFollowerTest, ALeaderMissingFromTheListIsFollowed) {
  FakeServer leader(Leader);
  FakeServer standby(StandbyOf(leader.url()));
  LeaderFollower follower({ClosedPort(), standby.url()}, Quick());
  Result<httplib::Response> response = Get(follower);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(follower.current(), leader.url());
  EXPECT_EQ(leader.calls(), 1);
}

TEST(LeaderFollowerTest, AClosedPortIsPassedForTheNextAddress) {
  FakeServer leader(Leader);
  LeaderFollower follower({ClosedPort(), leader.url()}, Quick());
  Result<httplib::Response> response = Get(follower, Replay::kUnsafe);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(leader.calls(), 1);
}

TEST(LeaderFollowerTest, AStandbyThatKnowsNoLeaderIsPassedToo) {
  FakeServer leader(Leader);
  FakeServer standby(StandbyOf(""));
  LeaderFollower follower({standby.url(), leader.url()}, Quick());
  Result<httplib::Response> response = Get(follower);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 200);
}

TEST(LeaderFollowerTest, ALeadersOwn503IsAnAnswerNotAMove) {
  FakeServer troubled([](httplib::Response& response) {
    response.status = 503;
    response.set_content(R"({"error":{"code":"unavailable","message":"store: disk full"}})",
                         "application/json");
  });
  FakeServer other(Leader);
  LeaderFollower follower({troubled.url(), other.url()}, Quick());
  Result<httplib::Response> response = Get(follower);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 503);
  EXPECT_EQ(other.calls(), 0);
}

TEST(LeaderFollowerTest, WhenAllFailTheMessageNamesEachAddressAndItsError) {
  FakeServer standby(StandbyOf(""));
  const std::string dead = ClosedPort();
  LeaderFollower follower({dead, standby.url()}, Quick());
  const auto start = std::chrono::steady_clock::now();
  Result<httplib::Response> response = Get(follower);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(response.status().message(), "cannot reach any server: " + dead +
                                             " (connection refused or unreachable), " +
                                             standby.url() + " (standby; leader unknown)");
  // It kept trying, with backoff, for about its patience, and no longer.
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, milliseconds(300));
  EXPECT_LT(took, milliseconds(3000));
  EXPECT_GT(standby.calls(), 2);
}

TEST(LeaderFollowerTest, ASingleDeadAddressFailsAtOnceAsBefore) {
  const std::string dead = ClosedPort();
  FollowOptions options = Quick();
  options.patience = milliseconds(10'000);
  LeaderFollower follower({dead}, options);
  const auto start = std::chrono::steady_clock::now();
  Result<httplib::Response> response = Get(follower);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().message(),
            "cannot reach the server at " + dead + " (connection refused or unreachable)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2000));
}

TEST(LeaderFollowerTest, ZeroPatienceTriesEachAddressOnce) {
  FakeServer standby(StandbyOf(""));
  FollowOptions options = Quick();
  options.patience = milliseconds(0);
  LeaderFollower follower({ClosedPort(), standby.url()}, options);
  ASSERT_FALSE(Get(follower).ok());
  EXPECT_EQ(standby.calls(), 1);
}

TEST(LeaderFollowerTest, ALostAnswerIsResentOnlyForARequestSafeToReplay) {
  Dropper dropper;
  FakeServer leader(Leader);
  const auto post = [](httplib::Client& client) {
    return client.Post("/api/v1/jobs", R"({"command":["true"]})", "application/json");
  };
  LeaderFollower unsafe({dropper.url(), leader.url()}, Quick());
  Result<httplib::Response> refused = unsafe.Request(post, Replay::kUnsafe);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("not sent again"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(leader.calls(), 0);

  LeaderFollower safe({dropper.url(), leader.url()}, Quick());
  Result<httplib::Response> resent = safe.Request(post, Replay::kSafe);
  ASSERT_TRUE(resent.ok()) << resent.status().ToString();
  EXPECT_EQ(leader.calls(), 1);
  EXPECT_EQ(dropper.calls(), 2);
}

}  // namespace
}  // namespace berth::follow
