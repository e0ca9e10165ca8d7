// Issue 28 over the HTTP API: a job in an image runs only on a node whose
// agent reported a container runtime, its launch carries the container,
// and while its node pulls the image the job is starting and says so.
#include "server/api_test_fixture.h"

namespace berth::server::api_testing {
namespace {

class ContainerApiTest : public ApiTest {
 protected:
  Client RegisterWithRuntime(const std::string& node, const std::string& runtime) {
    Client agent = As(NewToken("agent-" + node, "agent", node));
    NodeRegistration registration;
    registration.node = node;
    registration.gpu_type = "H100";
    registration.gpus = {GpuReport{0, 0, true}};
    registration.container_runtime = runtime;
    Reply reply = agent.Post("/api/v1/agent/register", protocol::RegistrationJson(registration));
    EXPECT_EQ(reply.status, 200) << reply.body.dump();
    return agent;
  }
};

TEST_F(ContainerApiTest, AJobInAnImageGoesToANodeWithARuntimeAndIsStartingWhileItPulls) {
  Client alice = As(NewToken("alice", "user"));
  Client bare = RegisterWithRuntime("bare", "");
  Client podman = RegisterWithRuntime("podman", "podman 4.3.1 (runc, cgroupfs, cgroup v1)");
  json nodes = Admin().Get("/api/v1/nodes").body["nodes"];
  for (const json& node : nodes) {
    EXPECT_EQ(node["container_runtime"].is_null(), node["name"] == "bare") << node.dump();
  }
  Reply submitted = alice.Post(
      "/api/v1/jobs",
      json{{"command", {"true"}}, {"container", {{"image", "img:1"}, {"pull", "never"}}}});
  ASSERT_EQ(submitted.status, 201) << submitted.body.dump();
  const int64_t id = submitted.body["id"];
  const json task = WaitForAssignment(podman, "podman", id);
  EXPECT_EQ(task["container"]["image"], "img:1");
  EXPECT_EQ(task["container"]["pull"], "never");
  const Reply bare_beat = Heartbeat(bare, "bare", {});
  for (const json& run : bare_beat.body["run"]) {
    EXPECT_NE(run.value("job", 0), id) << "placed on a node without a runtime";
  }

  TaskReport pulling{core::JobId{id}, 0, 1, TaskPhase::kRunning, std::nullopt, std::nullopt};
  pulling.starting = "pulling image img:1";
  Heartbeat(podman, "podman", {pulling});
  json job = alice.Get("/api/v1/jobs/" + std::to_string(id)).body;
  EXPECT_EQ(job["state"], "starting");
  EXPECT_EQ(job["message"], "starting: pulling image img:1");
  EXPECT_EQ(job["container"]["image"], "img:1");

  Heartbeat(podman, "podman",
            {TaskReport{core::JobId{id}, 0, 1, TaskPhase::kRunning, std::nullopt, std::nullopt}});
  job = WaitForState(alice, id, "running");
  EXPECT_EQ(job["message"], "");
}

}  // namespace
}  // namespace berth::server::api_testing
