// Over the HTTP API: where a job may run (GPU model sets, constraints,
// nodelist, exclude), jobs no node could ever host refused at submit, and
// the node pipeline's tally in a pending job's explanation.
#include "server/api_test_fixture.h"

namespace berth::server::api_testing {
namespace {

json Job(json fields) {
  fields["command"] = {"x"};
  return fields;
}

class ConstraintsApiTest : public ApiTest {
 protected:
  // The first node whose heartbeat answer runs the job.
  std::string AssignedNode(std::map<std::string, Client>& agents, int64_t id) {
    for (int i = 0; i < 300; ++i) {
      for (auto& [node, agent] : agents) {
        Reply reply = Heartbeat(agent, node, {});
        for (const json& task : reply.body["run"]) {
          if (task.value("job", 0) == id) return node;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "job " << id << " was never assigned";
    return "";
  }
};

TEST_F(ConstraintsApiTest, ASubmitNoNodeCouldEverHostIsRefusedNamingTheFieldAndTheLargestFit) {
  Client alice = As(NewToken("alice", "user"));
  RegisterAgent("n0", 4, {"ib"});
  RegisterAgent("n1", 4);
  auto refusal = [&](json fields) {
    Reply reply = alice.Post("/api/v1/jobs", Job(std::move(fields)));
    EXPECT_EQ(reply.status, 400) << reply.body.dump();
    return reply.body["error"].value("message", "");
  };
  EXPECT_EQ(refusal({{"gpus", 8}}),
            "gpus: 8 per task, but the largest node has 4; ask --nodes 2 --gpus 4 (0 of 2 nodes "
            "could ever host it: 2 have fewer than 8 GPUs); or set wait_for_nodes (berth submit "
            "--wait-for-nodes) to queue it for nodes not yet registered");
  EXPECT_THAT(refusal({{"gpus", 1}, {"gpu_type", "A100-40GB|B200"}}),
              StartsWith("gpu_type: 0 of 2 nodes could ever host it: 2 have H100 (asked: "
                         "A100-40GB|B200)"));
  EXPECT_THAT(refusal({{"gpus", 1}, {"constraint", "ib&nvlink"}}),
              StartsWith("constraint: 0 of 2 nodes could ever host it: 2 do not match its "
                         "constraint 'ib&nvlink'"));
  EXPECT_THAT(refusal({{"gpus", 1}, {"nodelist", "gpu[1-2]"}}),
              StartsWith("nodelist: 0 of 2 nodes could ever host it: 2 are not in its nodelist"));
  EXPECT_THAT(refusal({{"gpus", 4}, {"constraint", "ib"}, {"exclude", "n0"}}),
              StartsWith("exclude: 0 of 2 nodes could ever host it: 1 is excluded, 1 does not "
                         "match its constraint 'ib'"));
  EXPECT_THAT(refusal({{"gpus", 4}, {"tasks", 3}}),
              StartsWith("tasks: 3 tasks of this shape, but 2 of 2 nodes could ever host it; the "
                         "nodes of one GPU model could host 2 of its 3 tasks at once"));
  // Nothing refused was queued.
  EXPECT_TRUE(alice.Get("/api/v1/jobs").body["jobs"].empty());
}

TEST_F(ConstraintsApiTest, AJobThatMayWaitForNodesStartsWhenOneRegisters) {
  Client alice = As(NewToken("alice", "user"));
  std::map<std::string, Client> agents;
  agents.emplace("n0", RegisterAgent("n0", 4));
  const Reply submitted = alice.Post(
      "/api/v1/jobs", Job({{"gpus", 8}, {"constraint", "nvlink"}, {"wait_for_nodes", true}}));
  ASSERT_EQ(submitted.status, 201) << submitted.body.dump();
  const int64_t id = submitted.body["id"];
  const std::string explain = "/api/v1/jobs/" + std::to_string(id) + "/explain";
  json explained = json::object();
  for (int i = 0; i < 300 && explained.value("reason", "") != "infeasible"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    explained = alice.Get(explain).body;
  }
  ASSERT_EQ(explained["reason"], "infeasible") << explained.dump();
  EXPECT_EQ(explained["nodes"], (json{{"total", 1}, {"fit", 0}, {"rejected", {{"features", 1}}}}));

  agents.emplace("big", RegisterAgent("big", 8, {"nvlink"}));
  EXPECT_EQ(AssignedNode(agents, id), "big");
}

TEST_F(ConstraintsApiTest, WhatAnAgentSentComesBackEscapedWhenRefused) {
  Client agent = RegisterAgent("n0", 1);
  NodeRegistration registration;
  registration.node = "n0";
  registration.gpu_type = "H100";
  registration.gpus.push_back(GpuReport{0, 0, true});
  registration.features = {"i\x1b[2Jb"};
  const Reply feature =
      agent.Post("/api/v1/agent/register", protocol::RegistrationJson(registration));
  EXPECT_EQ(feature.status, 400);
  EXPECT_THAT(feature.body["error"]["message"].get<std::string>(),
              HasSubstr("features: 'i\\x1b[2Jb' is not a feature name"));
  registration.features = {};
  registration.node = "n\x07";
  const Reply foreign =
      agent.Post("/api/v1/agent/register", protocol::RegistrationJson(registration));
  EXPECT_EQ(foreign.status, 403);
  EXPECT_EQ(foreign.body["error"]["message"], "this agent's token is for node 'n0', not 'n\\x07'");
}

TEST_F(ConstraintsApiTest, FeaturesANodeGainsOnRegisteringAgainCountFromTheNextCycle) {
  Client alice = As(NewToken("alice", "user"));
  std::map<std::string, Client> agents;
  agents.emplace("n0", RegisterAgent("n0", 4));
  const Reply submitted = alice.Post(
      "/api/v1/jobs", Job({{"gpus", 1}, {"constraint", "ib"}, {"wait_for_nodes", true}}));
  ASSERT_EQ(submitted.status, 201) << submitted.body.dump();
  // The agent restarts with --feature ib (same node, same token).
  NodeRegistration again;
  again.node = "n0";
  again.gpu_type = "H100";
  for (int i = 0; i < 4; ++i) again.gpus.push_back(GpuReport{i, 0, true});
  again.features = {"ib"};
  Client& agent = agents.at("n0");
  ASSERT_EQ(agent.Post("/api/v1/agent/register", protocol::RegistrationJson(again)).status, 200);
  EXPECT_EQ(AssignedNode(agents, submitted.body.value("id", int64_t{0})), "n0");
  EXPECT_EQ(alice.Get("/api/v1/nodes").body["nodes"][0]["features"], json({"ib"}));
}

TEST_F(ConstraintsApiTest, TheServerMayTakeEveryJobForNodesNotYetRegistered) {
  server_.reset();
  wait_for_nodes_ = true;
  StartServer();
  Client alice = As(NewToken("alice", "user"));
  RegisterAgent("n0", 4);
  EXPECT_EQ(alice.Post("/api/v1/jobs", Job({{"gpus", 8}})).status, 201);
}

TEST_F(ConstraintsApiTest, ConstraintsNodelistExcludeAndModelSetsDecideWhereJobsRun) {
  Client alice = As(NewToken("alice", "user"));
  std::map<std::string, Client> agents;
  agents.emplace("a0", RegisterAgent("a0", 8, {"ib"}, "A100"));
  agents.emplace("a1", RegisterAgent("a1", 8, {"ib", "nvlink"}, "A100"));
  agents.emplace("h0", RegisterAgent("h0", 8, {}, "H100"));
  auto run = [&](json fields) -> std::string {
    const Reply reply = alice.Post("/api/v1/jobs", Job(std::move(fields)));
    EXPECT_EQ(reply.status, 201) << reply.body.dump();
    return AssignedNode(agents, reply.body.value("id", int64_t{0}));
  };
  EXPECT_EQ(run({{"gpus", 1}, {"constraint", "ib&nvlink"}}), "a1");
  EXPECT_EQ(run({{"gpus", 1}, {"constraint", "!ib"}}), "h0");
  EXPECT_EQ(run({{"gpus", 1}, {"nodelist", "a0"}}), "a0");
  EXPECT_EQ(run({{"gpus", 1}, {"exclude", "a[0-1]"}}), "h0");
  EXPECT_EQ(run({{"gpus", 6}, {"gpu_type", "V100|H100"}}), "h0");
  const Reply grouped = alice.Post("/api/v1/jobs", Job({{"gpus", 2}, {"gpus_in_one_group", true}}));
  EXPECT_EQ(grouped.status, 201) << grouped.body.dump();
  EXPECT_EQ(alice.Get("/api/v1/jobs/" + std::to_string(grouped.body.value("id", int64_t{0})))
                .body["gpus_in_one_group"],
            true);
}

TEST_F(ConstraintsApiTest, APendingJobSaysWhichNodesCannotStartItAndWhy) {
  Client alice = As(NewToken("alice", "user"));
  std::map<std::string, Client> agents;
  agents.emplace("a0", RegisterAgent("a0", 4, {"ib"}));
  agents.emplace("a1", RegisterAgent("a1", 4, {"ib"}));
  agents.emplace("h0", RegisterAgent("h0", 4));
  for (const std::string node : {"a0", "a1"}) {
    const int64_t filler = alice.Post("/api/v1/jobs", Job({{"gpus", 4}, {"nodelist", node}}))
                               .body.value("id", int64_t{0});
    EXPECT_EQ(AssignedNode(agents, filler), node);
  }
  const int64_t id = alice.Post("/api/v1/jobs", Job({{"gpus", 2}, {"constraint", "ib"}}))
                         .body.value("id", int64_t{0});
  const std::string explain = "/api/v1/jobs/" + std::to_string(id) + "/explain";
  json explained;
  for (int i = 0; i < 300 && explained["nodes"].is_null(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    explained = alice.Get(explain).body;
  }
  EXPECT_EQ(explained["reason"], "resources") << explained.dump();
  EXPECT_EQ(explained["nodes"],
            (json{{"total", 3}, {"fit", 0}, {"rejected", {{"features", 1}, {"gpus", 2}}}}));
  EXPECT_THAT(explained["message"].get<std::string>(),
              HasSubstr("waiting for 2 GPUs to free up; 0 of 3 nodes can start it now: 2 have "
                        "fewer than 2 free GPUs, 1 does not match its constraint 'ib'"));
}

}  // namespace
}  // namespace berth::server::api_testing
