// Over the HTTP API (issue 27, item 4): queue limits and ACLs refuse with
// 403 naming the rule; a job at its user's running limit waits with the
// reason; queues show and take their governance keys.
#include <sys/wait.h>

#include <cstdlib>

#include "server/api_test_fixture.h"

namespace berth::server::api_testing {
namespace {

// The queue tree the tests share: vision is governed, open is not.
json Queues(json vision) {
  vision["name"] = "vision";
  return json{{"queues", {vision, {{"name", "open"}}}}};
}

std::string ErrorOf(const Reply& reply) {
  return reply.body.is_object() && reply.body.contains("error")
             ? reply.body["error"].value("message", "")
             : reply.body.dump();
}

json Job(json extra = json::object()) {
  json job{{"command", {"x"}}, {"gpus", 1}};
  job.update(extra);
  return job;
}

// Polls the job's explanation until its reason is `reason`.
json WaitForReason(Client& client, int64_t id, const std::string& reason) {
  json explained;
  for (int i = 0; i < 300; ++i) {
    explained = client.Get("/api/v1/jobs/" + std::to_string(id) + "/explain").body;
    if (explained.value("reason", "") == reason) return explained;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ADD_FAILURE() << "job " << id << " never waited for " << reason << ": " << explained.dump();
  return explained;
}

TEST_F(ApiTest, QueueLimitsThatCanNeverBeMetAre403NamingTheLimit) {
  ASSERT_EQ(
      Admin()
          .Put("/api/v1/queues",
               Queues({{"max_priority", 100}, {"max_time_s", 3600}, {"max_gpus_per_user", 8}}))
          .status,
      200);
  Client bob = As(NewToken("bob", "user"));
  RegisterAgent("n0", 8);

  Reply priority = bob.Post("/api/v1/jobs", Job({{"queue", "vision"}, {"priority", 900}}));
  EXPECT_EQ(priority.status, 403);
  EXPECT_EQ(ErrorOf(priority), "priority 900 is over queue vision's max_priority 100");
  Reply time = bob.Post("/api/v1/jobs", Job({{"queue", "vision"}, {"time_limit_s", 7200}}));
  EXPECT_EQ(time.status, 403);
  EXPECT_EQ(ErrorOf(time), "time_limit_s 7200 is over queue vision's max_time_s 3600");
  Reply gpus = bob.Post("/api/v1/jobs", Job({{"queue", "vision"}, {"gpus", 4}, {"tasks", 3}}));
  EXPECT_EQ(gpus.status, 403);
  EXPECT_EQ(ErrorOf(gpus),
            "12 GPUs is over queue vision's max_gpus_per_user 8: it could never start");

  // Admins are unlimited in priority; other queues keep the server's range.
  EXPECT_EQ(Admin().Post("/api/v1/jobs", Job({{"queue", "vision"}, {"priority", 900}})).status,
            201);
  EXPECT_EQ(bob.Post("/api/v1/jobs", Job({{"queue", "open"}, {"priority", 900}})).status, 201);
  // A job without a time limit gets the queue's longest.
  Reply unlimited = bob.Post("/api/v1/jobs", Job({{"queue", "vision"}}));
  ASSERT_EQ(unlimited.status, 201) << unlimited.body.dump();
  const json job =
      bob.Get("/api/v1/jobs/" + std::to_string(unlimited.body["id"].get<int64_t>())).body;
  EXPECT_EQ(job["time_limit_s"], 3600);
  EXPECT_EQ(job["queue"], "vision");
}

TEST_F(ApiTest, AJobAtItsUsersRunningLimitWaitsSayingWhy) {
  ASSERT_EQ(Admin()
                .Put("/api/v1/queues",
                     Queues({{"max_gpus_per_user", 8}, {"max_running_jobs_per_user", 3}}))
                .status,
            200);
  Client bob = As(NewToken("bob", "user"));
  Client alice = As(NewToken("alice", "user"));
  Client agent = RegisterAgent("n0", 16);
  const int64_t first =
      bob.Post("/api/v1/jobs", Job({{"queue", "vision"}, {"gpus", 8}})).body["id"];
  WaitForAssignment(agent, "n0", first);
  const int64_t waiting = bob.Post("/api/v1/jobs", Job({{"queue", "vision"}})).body["id"];
  const json explained = WaitForReason(bob, waiting, "user_limit");
  EXPECT_THAT(explained["message"].get<std::string>(),
              StartsWith("user limit: 8 GPUs running of 8 allowed in queue vision"));
  // The job's own view and the listing (what `berth queue` and the
  // dashboard show) say the same.
  const json job = bob.Get("/api/v1/jobs/" + std::to_string(waiting)).body;
  EXPECT_EQ(job["reason"], "user_limit");
  EXPECT_THAT(job["message"].get<std::string>(),
              StartsWith("user limit: 8 GPUs running of 8 allowed in queue vision"));
  const json listed = bob.Get("/api/v1/jobs?live=true").body["jobs"];
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[1]["reason"], "user_limit");
  // Another user's job starts beside it: the limit is bob's, not the queue's.
  const int64_t other = alice.Post("/api/v1/jobs", Job({{"queue", "vision"}})).body["id"];
  WaitForAssignment(agent, "n0", other);
}

TEST_F(ApiTest, QueuesShowAndTakeTheirGovernance) {
  const json vision{{"default", true},
                    {"shares", 3},
                    {"max_gpus_per_user", 8},
                    {"max_running_jobs_per_user", 4},
                    {"max_priority", 100},
                    {"max_time_s", 86400},
                    {"allow_users", {"alice"}},
                    {"allow_groups", {"cv-team"}},
                    {"default_memory_per_gpu_mib", 32768},
                    {"default_memory_per_cpu_mib", 4096}};
  ASSERT_EQ(Admin().Put("/api/v1/queues", Queues(vision)).status, 200);
  const json listed = Admin().Get("/api/v1/queues").body["queues"];
  ASSERT_EQ(listed.size(), 2u);
  for (const auto& [key, value] : vision.items()) EXPECT_EQ(listed[0][key], value) << key;
  EXPECT_EQ(listed[1]["shares"], 1);
  EXPECT_TRUE(listed[1]["max_priority"].is_null());
  EXPECT_EQ(listed[1]["allow_users"], json::array());
  EXPECT_TRUE(listed[1]["default_memory_per_gpu_mib"].is_null());

  Reply typo = Admin().Put("/api/v1/queues", Queues({{"max_gpu_per_user", 8}}));
  EXPECT_EQ(typo.status, 400);
  EXPECT_THAT(ErrorOf(typo), HasSubstr("max_gpu_per_user"));
  Reply zero = Admin().Put("/api/v1/queues", Queues({{"shares", 0}}));
  EXPECT_EQ(zero.status, 400);
  EXPECT_THAT(ErrorOf(zero), HasSubstr("shares"));
  Reply no_memory = Admin().Put("/api/v1/queues", Queues({{"default_memory_per_cpu_mib", 0}}));
  EXPECT_EQ(no_memory.status, 400);
  EXPECT_THAT(ErrorOf(no_memory), HasSubstr("default_memory_per_cpu_mib"));

  // A job naming no queue goes to the default one; they survive a restart.
  Client alice = As(NewToken("alice", "user"));
  // Asking no memory, it gets the queue's default (per GPU: it has one).
  const int64_t id = alice.Post("/api/v1/jobs", Job()).body["id"];
  const json job = alice.Get("/api/v1/jobs/" + std::to_string(id)).body;
  EXPECT_EQ(job["queue"], "vision");
  EXPECT_EQ(job["memory_mib"], 32768) << job.dump();
  server_.reset();
  StartServer();
  const json reloaded = Admin().Get("/api/v1/queues").body["queues"][0];
  EXPECT_EQ(reloaded["allow_groups"], json{"cv-team"});
  EXPECT_EQ(reloaded["default_memory_per_gpu_mib"], 32768);
  EXPECT_EQ(reloaded["default_memory_per_cpu_mib"], 4096);
}

TEST_F(ApiTest, OnlyListedUsersMaySubmitToAQueue) {
  ASSERT_EQ(Admin().Put("/api/v1/queues", Queues({{"allow_users", {"alice"}}})).status, 200);
  Client alice = As(NewToken("alice", "user"));
  Client bob = As(NewToken("bob", "user"));
  EXPECT_EQ(alice.Post("/api/v1/jobs", Job({{"queue", "vision"}, {"wait_for_nodes", true}})).status,
            201);
  Reply refused = bob.Post("/api/v1/jobs", Job({{"queue", "vision"}, {"wait_for_nodes", true}}));
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(ErrorOf(refused), "user bob may not submit to queue vision (allow_users: alice)");
  EXPECT_EQ(
      Admin().Post("/api/v1/jobs", Job({{"queue", "vision"}, {"wait_for_nodes", true}})).status,
      201)
      << "admins submit to any queue";
}

// Runs a shell command; true when it exits 0.
bool Shell(const std::string& command) {
  const int status = std::system((command + " >/dev/null 2>&1").c_str());
  return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// A Unix group and a member made for one test, removed after it.
class UnixGroupTest : public ApiTest {
 protected:
  void SetUp() override {
    if (geteuid() != 0 || !Shell("command -v groupadd && command -v useradd")) {
      GTEST_SKIP() << "needs root and groupadd/useradd to make a group";
    }
    const std::string suffix = std::to_string(getpid());
    group_ = "berth-cv" + suffix;
    member_ = "berth-m" + suffix;
    outsider_ = "berth-o" + suffix;
    ASSERT_TRUE(Shell("groupadd " + group_));
    ASSERT_TRUE(Shell("useradd --no-create-home -G " + group_ + " " + member_));
    ASSERT_TRUE(Shell("useradd --no-create-home " + outsider_));
    made_ = true;
    ApiTest::SetUp();
  }
  void TearDown() override {
    ApiTest::TearDown();
    if (!made_) return;
    Shell("userdel " + member_);
    Shell("userdel " + outsider_);
    Shell("groupdel " + group_);
  }

  std::string group_, member_, outsider_;
  bool made_ = false;
};

TEST_F(UnixGroupTest, OnlyMembersOfAnAllowedUnixGroupMaySubmit) {
  ASSERT_EQ(Admin().Put("/api/v1/queues", Queues({{"allow_groups", {group_}}})).status, 200);
  Client member = As(NewToken(member_, "user"));
  Client outsider = As(NewToken(outsider_, "user"));
  Client stranger = As(NewToken("no-such-unix-user", "user"));
  const json job = Job({{"queue", "vision"}, {"wait_for_nodes", true}});
  EXPECT_EQ(member.Post("/api/v1/jobs", job).status, 201);
  Reply refused = outsider.Post("/api/v1/jobs", job);
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(ErrorOf(refused),
            "user " + outsider_ + " may not submit to queue vision (allow_groups: " + group_ + ")");
  EXPECT_EQ(stranger.Post("/api/v1/jobs", job).status, 403) << "unknown to the host: no groups";
  // A user's primary group counts too: root's is root.
  ASSERT_EQ(Admin().Put("/api/v1/queues", Queues({{"allow_groups", {"root"}}})).status, 200);
  EXPECT_EQ(As(NewToken("root", "user")).Post("/api/v1/jobs", job).status, 201);
  EXPECT_EQ(member.Post("/api/v1/jobs", job).status, 403);
}

}  // namespace
}  // namespace berth::server::api_testing
