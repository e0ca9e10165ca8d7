// Over the HTTP API (issue 29, item 1): a batch job runs its script in task
// 0 only and ends with it; steps (srun inside the job) are laid out over the
// job's nodes, reach the nodes through the tasks that host them, and end
// with their tasks' exits.
#include "server/api_test_fixture.h"

namespace berth::server::api_testing {
namespace {

class StepsApiTest : public ApiTest {
 protected:
  // A batch job of two 4-GPU tasks on n0 and n1, running; returns its id
  // and fills the attempt and which node runs task 0.
  int64_t RunBatchJob(Client& user, Client& n0, Client& n1) {
    const Reply submitted = user.Post(
        "/api/v1/jobs", json{{"command", {"train"}}, {"tasks", 2}, {"gpus", 4}, {"batch", true}});
    EXPECT_EQ(submitted.status, 201) << submitted.body.dump();
    const int64_t id = submitted.body["id"];
    const json on0 = WaitForAssignment(n0, "n0", id);
    const json on1 = WaitForAssignment(n1, "n1", id);
    attempt_ = on0["attempt"];
    task_on_.clear();
    task_on_[on0["task"].get<int32_t>()] = "n0";
    task_on_[on1["task"].get<int32_t>()] = "n1";
    assignment_[on0["task"].get<int32_t>()] = on0;
    assignment_[on1["task"].get<int32_t>()] = on1;
    Heartbeat(n0, "n0", {Running(id, on0["task"])});
    Heartbeat(n1, "n1", {Running(id, on1["task"])});
    WaitForState(user, id, "running");
    return id;
  }

  TaskReport Running(int64_t id, int32_t task) const {
    return TaskReport{core::JobId{id}, task, attempt_, TaskPhase::kRunning, {}, {}};
  }
  TaskReport Exited(int64_t id, int32_t task, int32_t code) const {
    return TaskReport{core::JobId{id}, task, attempt_, TaskPhase::kExited, code, {}};
  }
  TaskReport Stopped(int64_t id, int32_t task) const {
    TaskReport report{core::JobId{id}, task, attempt_, TaskPhase::kExited, {}, 15};
    report.outcome = protocol::TaskOutcome::kStopped;
    return report;
  }
  Client& NodeOf(int32_t task, Client& n0, Client& n1) { return task_on_[task] == "n0" ? n0 : n1; }

  int32_t attempt_ = 0;
  std::map<int32_t, std::string> task_on_;
  std::map<int32_t, json> assignment_;
};

TEST_F(StepsApiTest, ABatchJobRunsItsScriptInTaskZeroAndEndsWithIt) {
  Client alice = As(NewToken("alice", "user"));
  Client n0 = RegisterAgent("n0", 4);
  Client n1 = RegisterAgent("n1", 4);
  const int64_t id = RunBatchJob(alice, n0, n1);
  EXPECT_EQ(assignment_[0]["command"], json({"train"}));
  // The other task holds its node's share, writing nothing to --output.
  EXPECT_EQ(assignment_[1]["command"], json({"sleep", "infinity"}));
  EXPECT_TRUE(alice.Get("/api/v1/jobs/" + std::to_string(id)).body["batch"].get<bool>());

  // The script ends: the holder is stopped, and its stop is no failure.
  Client& holder_node = NodeOf(1, n0, n1);
  const std::string holder_name = task_on_[1];
  Heartbeat(NodeOf(0, n0, n1), task_on_[0], {Exited(id, 0, 0)});
  const Reply stop = Heartbeat(holder_node, holder_name, {Running(id, 1)});
  ASSERT_EQ(stop.body["stop"].size(), 1u) << stop.body.dump();
  EXPECT_EQ(stop.body["stop"][0]["task"], 1);
  Heartbeat(holder_node, holder_name, {Stopped(id, 1)});
  const json done = WaitForState(alice, id, "succeeded");
  EXPECT_EQ(done["exit_code"], 0);
}

TEST_F(StepsApiTest, AFailedBatchScriptFailsTheJobWithItsCode) {
  Client alice = As(NewToken("alice", "user"));
  Client n0 = RegisterAgent("n0", 4);
  Client n1 = RegisterAgent("n1", 4);
  const int64_t id = RunBatchJob(alice, n0, n1);
  Heartbeat(NodeOf(0, n0, n1), task_on_[0], {Exited(id, 0, 3)});
  Heartbeat(NodeOf(1, n0, n1), task_on_[1], {Stopped(id, 1)});
  const json done = WaitForState(alice, id, "failed");
  EXPECT_EQ(done["exit_code"], 3);
}

TEST_F(StepsApiTest, AStepRunsOneTaskPerNodeAndEndsWithItsTasks) {
  Client alice = As(NewToken("alice", "user"));
  Client bob = As(NewToken("bob", "user"));
  Client n0 = RegisterAgent("n0", 4);
  Client n1 = RegisterAgent("n1", 4);
  const int64_t id = RunBatchJob(alice, n0, n1);
  const std::string steps = "/api/v1/jobs/" + std::to_string(id) + "/steps";
  const json request{{"command", {"python3", "train.py"}}, {"env", {{"LR", "0.1"}}}};
  EXPECT_EQ(bob.Post(steps, request).status, 403);
  const Reply bad = alice.Post(steps, json{{"command", {"x"}}, {"nodes", 3}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_THAT(bad.body["error"].value("message", ""),
              HasSubstr("nodes: the job has 2 nodes, not 3"));
  EXPECT_EQ(alice.Post(steps, json{{"comand", {"x"}}}).status, 400);

  const Reply launched = alice.Post(steps, request);
  ASSERT_EQ(launched.status, 201) << launched.body.dump();
  EXPECT_EQ(launched.body["step"], 0);
  EXPECT_EQ(launched.body["state"], "running");
  ASSERT_EQ(launched.body["tasks"].size(), 2u);
  const std::string first = task_on_[0];
  const std::string second = task_on_[1];
  EXPECT_EQ(launched.body["nodes"], json({first, second}));
  if (first == "n0") {
    EXPECT_EQ(launched.body["nodelist"], "n[0-1]");
  }

  // Each node's hosting task carries its step task, with Slurm's variables.
  for (int32_t rank = 0; rank < 2; ++rank) {
    Client& node = NodeOf(rank, n0, n1);
    const Reply desired = Heartbeat(node, task_on_[rank], {Running(id, rank)});
    ASSERT_EQ(desired.body["run"].size(), 1u) << desired.body.dump();
    const json& hosted = desired.body["run"][0]["steps"];
    ASSERT_EQ(hosted.size(), 1u) << desired.body.dump();
    EXPECT_EQ(hosted[0]["rank"], rank);
    EXPECT_EQ(hosted[0]["command"], json({"python3", "train.py"}));
    const json& env = hosted[0]["env"];
    EXPECT_EQ(env["SLURM_PROCID"], std::to_string(rank));
    EXPECT_EQ(env["SLURM_NODEID"], std::to_string(rank));
    EXPECT_EQ(env["SLURM_LOCALID"], "0");
    EXPECT_EQ(env["SLURM_STEP_ID"], "0");
    EXPECT_EQ(env["SLURM_STEP_NUM_TASKS"], "2");
    EXPECT_EQ(env["SLURM_STEP_NUM_NODES"], "2");
    EXPECT_EQ(env["SLURM_STEP_NODELIST"], launched.body["nodelist"]);
    EXPECT_EQ(env["LR"], "0.1");
  }

  // Rank 1 fails, rank 0 succeeds: the step fails with the highest code.
  const std::string step = steps + "/0";
  protocol::Heartbeat report{task_on_[1], {Running(id, 1)}, {}};
  report.steps = {protocol::StepTaskReport{core::JobId{id}, 1, attempt_, 0, 1, 3, {}}};
  ASSERT_EQ(
      NodeOf(1, n0, n1).Post("/api/v1/agent/heartbeat", protocol::HeartbeatJson(report)).status,
      200);
  EXPECT_EQ(alice.Get(step).body["state"], "running");
  report = protocol::Heartbeat{task_on_[0], {Running(id, 0)}, {}};
  report.steps = {protocol::StepTaskReport{core::JobId{id}, 0, attempt_, 0, 0, 0, {}}};
  const Reply after =
      NodeOf(0, n0, n1).Post("/api/v1/agent/heartbeat", protocol::HeartbeatJson(report));
  ASSERT_EQ(after.status, 200);
  // An ended step task is no longer handed to its node.
  EXPECT_FALSE(after.body["run"][0].contains("steps")) << after.body.dump();
  const json ended = alice.Get(step).body;
  EXPECT_EQ(ended["state"], "failed");
  EXPECT_EQ(ended["exit_code"], 3);
  EXPECT_EQ(bob.Get(step).status, 403);
  // It started when it was launched and ended with its last task.
  EXPECT_TRUE(ended["start_time"].is_string()) << ended.dump();
  EXPECT_TRUE(ended["end_time"].is_string()) << ended.dump();
  EXPECT_TRUE(launched.body["end_time"].is_null()) << launched.body.dump();

  // A second step, two tasks on the first node only; then cancelled.
  const Reply packed = alice.Post(steps, json{{"command", {"x"}}, {"ntasks", 2}, {"nodes", 1}});
  ASSERT_EQ(packed.status, 201) << packed.body.dump();
  EXPECT_EQ(packed.body["step"], 1);
  EXPECT_EQ(packed.body["nodes"], json({first}));
  const Reply cancelled = alice.Post(steps + "/1/cancel");
  ASSERT_EQ(cancelled.status, 200);
  const Reply told = Heartbeat(NodeOf(0, n0, n1), first, {Running(id, 0)});
  ASSERT_EQ(told.body["run"][0]["steps"].size(), 2u) << told.body.dump();
  EXPECT_TRUE(told.body["run"][0]["steps"][0]["cancel"].get<bool>());

  // The job's steps, listed by id, each as GET of it shows it (sacct's rows).
  const Reply listed = alice.Get(steps);
  ASSERT_EQ(listed.status, 200) << listed.body.dump();
  ASSERT_EQ(listed.body["steps"].size(), 2u) << listed.body.dump();
  EXPECT_EQ(listed.body["steps"][0], alice.Get(step).body);
  EXPECT_EQ(listed.body["steps"][1], alice.Get(steps + "/1").body);
  EXPECT_EQ(bob.Get(steps).status, 403);
  EXPECT_EQ(alice.Get("/api/v1/jobs/999999/steps").status, 404);

  // The listing carries them with steps=true (sacct's one request), to the
  // job's readers only; without it, none.
  auto listed_job = [&](Client& who, const std::string& query) {
    const Reply jobs = who.Get("/api/v1/jobs?" + query);
    EXPECT_EQ(jobs.status, 200) << jobs.body.dump();
    for (const json& job : jobs.body["jobs"]) {
      if (job["id"] == id) return job;
    }
    return json();
  };
  EXPECT_EQ(listed_job(alice, "steps=true")["steps"], listed.body["steps"]);
  EXPECT_EQ(listed_job(alice, "live=true&steps=true")["steps"], listed.body["steps"]);
  EXPECT_FALSE(listed_job(alice, "steps=false").contains("steps"));
  EXPECT_FALSE(listed_job(bob, "steps=true").contains("steps"));
  const Reply bad_steps = alice.Get("/api/v1/jobs?steps=yes");
  EXPECT_EQ(bad_steps.status, 400);
  EXPECT_THAT(bad_steps.body["error"].value("message", ""), HasSubstr("steps"));
}

TEST_F(StepsApiTest, StepsOutliveARestartOfTheServer) {
  const std::string token = NewToken("alice", "user");
  Client alice = As(token);
  Client n0 = RegisterAgent("n0", 4);
  Client n1 = RegisterAgent("n1", 4);
  const int64_t id = RunBatchJob(alice, n0, n1);
  const std::string steps = "/api/v1/jobs/" + std::to_string(id) + "/steps";
  const Reply launched = alice.Post(steps, json{{"command", {"x"}}});
  ASSERT_EQ(launched.status, 201);
  ASSERT_TRUE(launched.body["start_time"].is_string()) << launched.body.dump();
  // Rank 1 ends before the restart; rank 0 runs on.
  protocol::Heartbeat report{task_on_[1], {Running(id, 1)}, {}};
  report.steps = {protocol::StepTaskReport{core::JobId{id}, 1, attempt_, 0, 1, 0, {}}};
  ASSERT_EQ(
      NodeOf(1, n0, n1).Post("/api/v1/agent/heartbeat", protocol::HeartbeatJson(report)).status,
      200);

  server_.reset();
  StartServer();
  Client again = As(token);
  const json step = again.Get(steps + "/0").body;
  EXPECT_EQ(step["state"], "running") << step.dump();
  ASSERT_EQ(step["tasks"].size(), 2u) << step.dump();
  EXPECT_EQ(step["tasks"][1]["exit_code"], 0);
  EXPECT_TRUE(step["tasks"][0]["exit_code"].is_null());
  // Rank 0's node still learns its step task, and the next step follows on.
  Client first = RegisterAgent(task_on_[0], 4);
  const Reply desired = Heartbeat(first, task_on_[0], {Running(id, 0)});
  ASSERT_EQ(desired.body["run"].size(), 1u) << desired.body.dump();
  EXPECT_EQ(desired.body["run"][0]["steps"].size(), 1u) << desired.body.dump();
  EXPECT_EQ(again.Post(steps, json{{"command", {"y"}}}).body["step"], 1);
  EXPECT_EQ(step["start_time"], launched.body["start_time"]) << "its start is kept";
}

TEST_F(StepsApiTest, NoStepsInAJobThatIsNotRunning) {
  Client alice = As(NewToken("alice", "user"));
  const int64_t id = alice.Post("/api/v1/jobs", json{{"command", {"x"}}, {"gpus", 4}}).body["id"];
  const Reply refused =
      alice.Post("/api/v1/jobs/" + std::to_string(id) + "/steps", json{{"command", {"x"}}});
  EXPECT_EQ(refused.status, 409) << refused.body.dump();
  EXPECT_THAT(refused.body["error"].value("message", ""), HasSubstr("is not running"));
}

}  // namespace
}  // namespace berth::server::api_testing
