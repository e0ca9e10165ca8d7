// Issue 29 over the HTTP API: an array's %N holds its elements back with
// reason array_limit, also after a restart; --dependency=singleton waits
// for the earlier jobs of its name and user; POST .../hold and PATCH
// /api/v1/jobs/{id} (Slurm's scontrol hold and update) change a waiting
// job within its owner's rights, 4xx naming the field otherwise.
#include <set>

#include "server/api_test_fixture.h"

namespace berth::server::api_testing {
namespace {

std::string ErrorOf(const Reply& reply) {
  return reply.body.is_object() && reply.body.contains("error")
             ? reply.body["error"].value("message", "")
             : reply.body.dump();
}

std::string Path(int64_t id) { return "/api/v1/jobs/" + std::to_string(id); }

// Polls the job until its API reason is `reason`.
json WaitForReason(Client& client, int64_t id, const std::string& reason) {
  json job;
  for (int i = 0; i < 300; ++i) {
    job = client.Get(Path(id)).body;
    if (job.value("reason", "") == reason) return job;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ADD_FAILURE() << "job " << id << " never waited for " << reason << ": " << job.dump();
  return job;
}

// The jobs of the node's desired state (what it is told to run).
std::set<int64_t> Assigned(const Reply& reply) {
  std::set<int64_t> jobs;
  for (const json& task : reply.body["run"]) jobs.insert(task.value("job", int64_t{0}));
  return jobs;
}

TEST_F(ApiTest, AnArraysPercentNHoldsItsOtherElementsBackAlsoAfterARestart) {
  const std::string alice_token = NewToken("alice", "user");
  const std::string agent_token = NewToken("agent-n0", "agent", "n0");
  Client alice = As(alice_token);
  RegisterAgent("n0", 8);
  Client agent = As(agent_token);
  const Reply submitted =
      alice.Post("/api/v1/jobs", json{{"command", {"x"}}, {"gpus", 1}, {"array", "0-3%2"}});
  ASSERT_EQ(submitted.status, 201) << submitted.body.dump();
  std::vector<int64_t> ids = submitted.body["ids"].get<std::vector<int64_t>>();
  ASSERT_EQ(ids.size(), 4u);
  std::vector<TaskReport> running;
  for (int64_t id : {ids[0], ids[1]}) {
    const json task = WaitForAssignment(agent, "n0", id);
    running.push_back(TaskReport{
        core::JobId{id}, 0, task["attempt"].get<int32_t>(), TaskPhase::kRunning, {}, {}});
  }
  Heartbeat(agent, "n0", running);
  for (int64_t id : {ids[2], ids[3]}) {
    const json job = WaitForReason(alice, id, "array_limit");
    EXPECT_EQ(job["state"], "pending");
    EXPECT_THAT(job.value("message", ""), HasSubstr("%2"));
    EXPECT_EQ(job["array_max_running"], 2) << "sacct shows it: 12_[2-3%2]";
  }

  // The limit is kept with the job: a restarted server holds them back too.
  server_.reset();
  StartServer();
  Client alice_again = As(alice_token);
  Client agent_again = As(agent_token);
  for (int i = 0; i < 5; ++i) Heartbeat(agent_again, "n0", running);
  WaitForReason(alice_again, ids[2], "array_limit");
  EXPECT_FALSE(Assigned(Heartbeat(agent_again, "n0", running)).contains(ids[2]));

  // One element ends: one more starts, never both.
  running[0].phase = TaskPhase::kExited;
  running[0].exit_code = 0;
  Heartbeat(agent_again, "n0", running);
  running.erase(running.begin());
  bool assigned = false;
  for (int i = 0; i < 300 && !assigned; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    assigned = Assigned(Heartbeat(agent_again, "n0", running)).contains(ids[2]);
  }
  EXPECT_TRUE(assigned) << "the next element starts once one has ended";
  EXPECT_EQ(WaitForReason(alice_again, ids[3], "array_limit")["state"], "pending");
}

TEST_F(ApiTest, ASingletonWaitsForTheEarlierJobsOfItsNameAndUser) {
  Client alice = As(NewToken("alice", "user"));
  Client bob = As(NewToken("bob", "user"));
  Client agent = RegisterAgent("n0", 8);
  auto submit = [](Client& who, const std::string& name, json depends_on) {
    json body{{"command", {"x"}}, {"gpus", 1}, {"name", name}};
    if (!depends_on.is_null()) body["depends_on"] = depends_on;
    const Reply reply = who.Post("/api/v1/jobs", body);
    EXPECT_EQ(reply.status, 201) << reply.body.dump();
    return reply.body.value("id", int64_t{0});
  };
  const int64_t first = submit(alice, "train", nullptr);
  // Held at submit: a hold after would race the scheduler, which may start it.
  const Reply held_reply = alice.Post(
      "/api/v1/jobs", json{{"command", {"x"}}, {"gpus", 1}, {"name", "train"}, {"hold", true}});
  ASSERT_EQ(held_reply.status, 201) << held_reply.body.dump();
  const int64_t held_one = held_reply.body["id"];
  const int64_t singleton = submit(alice, "train", json::array({"singleton"}));
  const int64_t other_name = submit(alice, "eval", json::array({"singleton"}));
  const int64_t other_user = submit(bob, "train", json::array({"singleton"}));
  const json waiting = alice.Get(Path(singleton)).body;
  EXPECT_EQ(waiting["state"], "held");
  EXPECT_EQ(waiting["reason"], "dependency");
  EXPECT_EQ(waiting["depends_on"], json::array({"singleton"}));
  WaitForAssignment(agent, "n0", other_name);
  WaitForAssignment(agent, "n0", other_user);

  // The first ends: the held one (any state counts) still keeps it waiting.
  json task = WaitForAssignment(agent, "n0", first);
  Heartbeat(agent, "n0",
            {TaskReport{
                core::JobId{first}, 0, task["attempt"].get<int32_t>(), TaskPhase::kExited, 1, {}}});
  WaitForState(alice, first, "failed");
  Heartbeat(agent, "n0", {});
  EXPECT_EQ(alice.Get(Path(singleton)).body["reason"], "dependency");
  ASSERT_EQ(alice.Post(Path(held_one) + "/cancel").status, 200);
  WaitForAssignment(agent, "n0", singleton);  // every earlier namesake ended, however
}

TEST_F(ApiTest, HoldAndReleaseAWaitingJob) {
  Client alice = As(NewToken("alice", "user"));
  Client bob = As(NewToken("bob", "user"));
  const int64_t id = alice.Post("/api/v1/jobs", json{{"command", {"x"}}}).body["id"];
  EXPECT_EQ(bob.Post(Path(id) + "/hold").status, 403);
  EXPECT_EQ(alice.Post(Path(99999) + "/hold").status, 404);
  ASSERT_EQ(alice.Post(Path(id) + "/hold").status, 200);
  json job = alice.Get(Path(id)).body;
  EXPECT_EQ(job["state"], "held");
  EXPECT_EQ(job["reason"], "held");
  EXPECT_EQ(alice.Post(Path(id) + "/hold").status, 200) << "held already: nothing to do";
  ASSERT_EQ(alice.Post(Path(id) + "/release").status, 200);
  EXPECT_EQ(alice.Get(Path(id)).body["state"], "pending");

  // Once it runs, it can no longer be held.
  Client agent = RegisterAgent("n0", 8);
  WaitForAssignment(agent, "n0", id);
  WaitForState(alice, id, "starting");
  const Reply late = alice.Post(Path(id) + "/hold");
  EXPECT_EQ(late.status, 409);
  EXPECT_THAT(ErrorOf(late), HasSubstr("no longer pending"));
}

TEST_F(ApiTest, UpdateChangesAWaitingJobWithinItsOwnersRights) {
  ASSERT_EQ(Admin()
                .Put("/api/v1/queues", json{{"queues",
                                             {{{"name", "vision"}, {"max_time_s", 3600}},
                                              {{"name", "private"}, {"allow_users", {"carol"}}},
                                              {{"name", "open"}}}}})
                .status,
            200);
  Client alice = As(NewToken("alice", "user"));
  Client bob = As(NewToken("bob", "user"));
  const int64_t id =
      alice
          .Post(
              "/api/v1/jobs",
              json{{"command", {"x"}}, {"queue", "vision"}, {"time_limit_s", 600}, {"hold", true}})
          .body["id"];

  Reply lowered = alice.Patch(Path(id), json{{"time_limit_s", 60}});
  ASSERT_EQ(lowered.status, 200) << lowered.body.dump();
  EXPECT_EQ(lowered.body["time_limit_s"], 60);
  EXPECT_EQ(alice.Patch(Path(id), json{{"time_limit_s", 3600}}).status, 200)
      << "up to what the queue allows";
  Reply over = alice.Patch(Path(id), json{{"time_limit_s", 7200}});
  EXPECT_EQ(over.status, 403);
  EXPECT_THAT(ErrorOf(over), HasSubstr("time_limit_s 7200 is over queue vision's max_time_s"));

  Reply moved = alice.Patch(Path(id), json{{"queue", "open"}});
  ASSERT_EQ(moved.status, 200) << moved.body.dump();
  EXPECT_EQ(moved.body["queue"], "open");
  EXPECT_EQ(moved.body["state"], "held") << "a held job stays held";
  Reply barred = alice.Patch(Path(id), json{{"queue", "private"}});
  EXPECT_EQ(barred.status, 403);
  EXPECT_THAT(ErrorOf(barred), HasSubstr("may not submit to queue private"));
  Reply unknown = alice.Patch(Path(id), json{{"queue", "nowhere"}});
  EXPECT_EQ(unknown.status, 400);
  EXPECT_THAT(ErrorOf(unknown), HasSubstr("queue"));

  Reply priority = alice.Patch(Path(id), json{{"priority", 10}});
  EXPECT_EQ(priority.status, 403);
  EXPECT_THAT(ErrorOf(priority), HasSubstr("priority: only an admin"));
  EXPECT_EQ(Admin().Patch(Path(id), json{{"priority", 10}}).body["priority"], 10);
  EXPECT_EQ(bob.Patch(Path(id), json{{"time_limit_s", 5}}).status, 403) << "not bob's job";
  Reply bad = alice.Patch(Path(id), json{{"time_limit_s", -1}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_THAT(ErrorOf(bad), HasSubstr("time_limit_s"));

  // Kept in the store: a restarted server reads the changed job.
  server_.reset();
  StartServer();
  const json stored = Admin().Get(Path(id)).body;
  EXPECT_EQ(stored["queue"], "open");
  EXPECT_EQ(stored["priority"], 10);
  EXPECT_EQ(stored["time_limit_s"], 3600);

  // A started job keeps its limit, queue and priority.
  Client agent = RegisterAgent("n0", 8);
  ASSERT_EQ(Admin().Post(Path(id) + "/release").status, 200);
  WaitForAssignment(agent, "n0", id);
  Reply started = Admin().Patch(Path(id), json{{"queue", "vision"}});
  EXPECT_EQ(started.status, 409);
  EXPECT_THAT(ErrorOf(started),
              HasSubstr("queue: job " + std::to_string(id) + " is no longer pending"));
}

}  // namespace
}  // namespace berth::server::api_testing
