// The TOML configuration: the shipped example parses to what it documents,
// and every mistake is an error naming its key.
#include "server/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace berth::server {
namespace {

using ::testing::HasSubstr;

TEST(ConfigTest, TheShippedExampleParsesToWhatItSays) {
  Result<ServerConfig> config = LoadConfig(std::string(BERTH_SOURCE_DIR) + "/deploy/berth.toml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->listen, "127.0.0.1:8080");
  EXPECT_EQ(config->data_dir, "/var/lib/berth");
  EXPECT_TRUE(config->postgres_url.empty());
  EXPECT_TRUE(config->tls_cert.empty());
  EXPECT_FALSE(config->public_metrics);
  EXPECT_EQ(config->http_limits.max_connections, http::Limits{}.max_connections);
  EXPECT_EQ(config->http_limits.max_connections_per_address,
            http::Limits{}.max_connections_per_address);
  EXPECT_EQ(config->http_limits.max_header_bytes, http::Limits{}.max_header_bytes);
  EXPECT_EQ(config->http_limits.header_timeout, http::Limits{}.header_timeout);
  EXPECT_EQ(config->http_limits.idle_timeout, http::Limits{}.idle_timeout);
  EXPECT_EQ(config->http_limits.body_timeout, http::Limits{}.body_timeout);
  EXPECT_EQ(config->controller.policy, "berth");
  EXPECT_EQ(config->controller.heartbeat_timeout, core::Duration::Seconds(30));
  EXPECT_EQ(config->controller.policy_config.berth.starvation_bound, core::Duration::Hours(36));
  EXPECT_EQ(config->controller.policy_config.berth.starvation_hard_bound,
            core::Duration::Hours(144));
  EXPECT_EQ(config->controller.cluster.usage_half_life, core::Duration::Hours(168));
  EXPECT_EQ(config->controller.queue_depth, 1000u);
  EXPECT_FALSE(config->controller.wait_for_nodes);
  EXPECT_EQ(config->history_every, core::Duration::Seconds(5));
  EXPECT_EQ(config->history_capacity, 17280u);
  ASSERT_TRUE(config->queues.has_value());
  ASSERT_EQ(config->queues->size(), 4u);
  EXPECT_EQ((*config->queues)[1].name, "vision");
  EXPECT_EQ((*config->queues)[1].parent, "research");
  EXPECT_EQ((*config->queues)[1].ceiling, core::WholeGpus(64));
  EXPECT_EQ((*config->queues)[1].shares, 2);
  EXPECT_EQ((*config->queues)[1].max_gpus_per_user, core::WholeGpus(16));
  EXPECT_EQ((*config->queues)[1].max_running_jobs_per_user, 8);
  EXPECT_EQ((*config->queues)[1].max_priority, 100);
  EXPECT_EQ((*config->queues)[1].max_time, core::Duration::Hours(72));
  EXPECT_EQ((*config->queues)[1].allow_groups, std::vector<std::string>{"cv-team"});
  EXPECT_EQ((*config->queues)[1].default_memory.per_gpu, core::MemoryMiB(65536));
  EXPECT_EQ((*config->queues)[1].default_memory.per_cpu, core::MemoryMiB(4096));
  EXPECT_TRUE((*config->queues)[3].is_default);
  EXPECT_EQ(config->controller.user_shares, (core::ClusterState::UserShares{{"alice", 2}}));
}

TEST(ConfigTest, SettingsReachTheScheduler) {
  Result<ServerConfig> config = ParseConfig(R"(
data_dir = "/tmp/x"
[scheduler]
policy = "fifo"
heartbeat_timeout_s = 5
fair_share_half_life_h = 24
starvation_bound_h = 200
queue_depth = 50
wait_for_nodes = true
[dashboard]
history_interval_s = 0.5
history_samples = 100
[http]
max_connections = 100
max_connections_per_address = 10
max_header_bytes = 4096
header_timeout_s = 2
idle_timeout_s = 5
body_timeout_s = 7
[metrics]
public = true
)",
                                            "test.toml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->controller.policy, "fifo");
  EXPECT_EQ(config->controller.heartbeat_timeout, core::Duration::Seconds(5));
  EXPECT_EQ(config->controller.cluster.usage_half_life, core::Duration::Hours(24));
  EXPECT_EQ(config->controller.policy_config.berth.starvation_hard_bound,
            core::Duration::Hours(200))
      << "the hard bound follows a bound set above its default";
  EXPECT_EQ(config->controller.queue_depth, 50u);
  EXPECT_TRUE(config->controller.wait_for_nodes);
  EXPECT_FALSE(config->queues.has_value());
  EXPECT_EQ(config->history_every, core::Duration::Millis(500));
  EXPECT_EQ(config->history_capacity, 100u);
  EXPECT_EQ(config->http_limits.max_connections, 100u);
  EXPECT_EQ(config->http_limits.max_connections_per_address, 10u);
  EXPECT_EQ(config->http_limits.max_header_bytes, 4096u);
  EXPECT_EQ(config->http_limits.header_timeout, std::chrono::seconds(2));
  EXPECT_EQ(config->http_limits.idle_timeout, std::chrono::seconds(5));
  EXPECT_EQ(config->http_limits.body_timeout, std::chrono::seconds(7));
  EXPECT_TRUE(config->public_metrics);
}

// Issue 28: the host paths jobs' containers may mount.
TEST(ConfigTest, ContainerMountAllowList) {
  Result<ServerConfig> config =
      ParseConfig("data_dir = \"/x\"\ncontainer_mount_allow = [\"/data\", \"/home\"]", "t");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->controller.limits.container_mounts.paths,
            (std::vector<std::string>{"/data", "/home"}));
  EXPECT_TRUE(
      ParseConfig("data_dir = \"/x\"", "t")->controller.limits.container_mounts.paths.empty());
  EXPECT_THAT(
      ParseConfig("data_dir = \"/x\"\ncontainer_mount_allow = [\"data\"]", "t").status().message(),
      ::testing::HasSubstr("container_mount_allow: expected absolute paths"));
  EXPECT_EQ(ParseConfig("data_dir = \"/x\"\ncontainer_mount_allow = [\"d\\u001b\"]", "t")
                .status()
                .message(),
            "container_mount_allow: expected absolute paths, got 'd\\x1b'")
      << "the refused path is quoted escaped";
}

TEST(ConfigTest, MistakesAreErrorsNamingTheKey) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"data_dir = \"/x\"\nlisen = \"127.0.0.1:1\"", "lisen: unknown key"},
      {"data_dir = \"/x\"\n[scheduler]\npolicy = \"magic\"", "scheduler.policy"},
      // Issue 30, item 4: oracles read the future; only the simulator has it.
      {"data_dir = \"/x\"\n[scheduler]\npolicy = \"srtf-oracle\"",
       "scheduler.policy: 'srtf-oracle' reads true job durations"},
      {"data_dir = \"/x\"\n[scheduler]\npolicy = \"sjf-oracle\"",
       "scheduler.policy: 'sjf-oracle' reads true job durations"},
      {"data_dir = \"/x\"\n[scheduler]\nheartbeat_timeout_s = -1", "scheduler.heartbeat_timeout_s"},
      {"data_dir = \"/x\"\n[scheduler]\nheartbeat_timeout_s = \"30\"",
       "scheduler.heartbeat_timeout_s"},
      {"data_dir = \"/x\"\n[scheduler]\nstarvation_bound_h = 48\nstarvation_hard_bound_h = 24",
       "scheduler.starvation_hard_bound_h: must be at least starvation_bound_h"},
      {"data_dir = \"/x\"\n[scheduler]\nqueue_depth = 0",
       "scheduler.queue_depth: must be at least 1"},
      {"data_dir = \"/x\"\n[scheduler]\nqueue_depth = 1.5", "scheduler.queue_depth"},
      {"data_dir = \"/x\"\n[scheduler]\nwait_for_nodes = 1",
       "scheduler.wait_for_nodes: wrong type"},
      {"data_dir = 7", "data_dir: wrong type"},
      {"listen = \"127.0.0.1:8080\"", "data_dir"},
      {"data_dir = \"/x\"\nlisten = \"nowhere\"", "listen"},
      {"data_dir = \"/x\"\n[tls]\ncert = \"c.pem\"", "tls: set both"},
      {"data_dir = \"/x\"\n[[queues]]\nname = \"a\"\nguaranteed_gpus = -2",
       "queues[0].guaranteed_gpus"},
      {"data_dir = \"/x\"\n[[queues]]\nname = \"a\"\ncolour = \"red\"", "queues[0].colour"},
      {"data_dir = \"/x\"\n[scheduler\n", "test.toml:"},
      {"data_dir = \"/x\"\n[dashboard]\nhistory_samples = 0", "dashboard.history_samples"},
      {"data_dir = \"/x\"\n[dashboard]\nhistory_interval_s = 0", "dashboard.history_interval_s"},
      {"data_dir = \"/x\"\n[dashboard]\ncharts = true", "dashboard.charts: unknown key"},
      {"data_dir = \"/x\"\n[http]\nmax_connections = 2", "http.max_connections: must be 16.."},
      {"data_dir = \"/x\"\n[http]\nheader_timeout_s = 0", "http.header_timeout_s"},
      {"data_dir = \"/x\"\n[http]\nthreads = 4", "http.threads: unknown key"},
      {"data_dir = \"/x\"\n[metrics]\npublic = \"yes\"", "metrics.public: wrong type"},
  };
  for (const auto& [text, wanted] : cases) {
    Result<ServerConfig> config = ParseConfig(text, "test.toml");
    ASSERT_FALSE(config.ok()) << text;
    EXPECT_THAT(config.status().message(), HasSubstr(wanted)) << text;
  }
}

// Issue 27, item 4: every governance key of a queue, and users' shares.
TEST(ConfigTest, QueueGovernanceAndUserSharesAreRead) {
  Result<ServerConfig> config = ParseConfig(R"(
data_dir = "/tmp/x"
[[queues]]
name = "vision"
default = true
shares = 3
max_gpus_per_user = 8
max_running_jobs_per_user = 4
max_priority = 100
max_time_s = 86400
allow_users = ["alice", "bob"]
allow_groups = ["cv-team"]
default_memory_per_gpu_mib = 32768
default_memory_per_cpu_mib = 4096
[[queues]]
name = "nlp"
[[users]]
name = "alice"
shares = 2
[[users]]
name = "bob"
shares = 5
)",
                                            "test.toml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  ASSERT_TRUE(config->queues.has_value());
  const core::QueueSpec& vision = (*config->queues)[0];
  EXPECT_TRUE(vision.is_default);
  EXPECT_EQ(vision.shares, 3);
  EXPECT_EQ(vision.max_gpus_per_user, core::WholeGpus(8));
  EXPECT_EQ(vision.max_running_jobs_per_user, 4);
  EXPECT_EQ(vision.max_priority, 100);
  EXPECT_EQ(vision.max_time, core::Duration::Seconds(86400));
  EXPECT_EQ(vision.allow_users, (std::vector<std::string>{"alice", "bob"}));
  EXPECT_EQ(vision.allow_groups, (std::vector<std::string>{"cv-team"}));
  EXPECT_EQ(vision.default_memory.per_gpu, core::MemoryMiB(32768));
  EXPECT_EQ(vision.default_memory.per_cpu, core::MemoryMiB(4096));
  const core::QueueSpec& nlp = (*config->queues)[1];
  EXPECT_FALSE(nlp.is_default);
  EXPECT_EQ(nlp.shares, 1) << "one share unless set";
  EXPECT_FALSE(nlp.max_gpus_per_user || nlp.max_running_jobs_per_user || nlp.max_priority ||
               nlp.max_time);
  EXPECT_TRUE(nlp.allow_users.empty() && nlp.allow_groups.empty());
  EXPECT_FALSE(nlp.default_memory.any()) << "no default memory unless set";
  EXPECT_EQ(config->controller.user_shares,
            (core::ClusterState::UserShares{{"alice", 2}, {"bob", 5}}));
}

TEST(ConfigTest, GovernanceMistakesAreErrorsNamingTheKey) {
  const std::string queue = "data_dir = \"/x\"\n[[queues]]\nname = \"a\"\n";
  const std::string users = "data_dir = \"/x\"\n[[users]]\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {queue + "shares = 0", "queues[0].shares: must be 1..1000000, got 0"},
      {queue + "shares = 1.5", "queues[0].shares: expected an integer"},
      {queue + "max_gpus_per_user = 0", "queues[0].max_gpus_per_user: must be 1.."},
      {queue + "max_running_jobs_per_user = -1", "queues[0].max_running_jobs_per_user"},
      {queue + "max_priority = 5000", "queues[0].max_priority: must be -1000..1000, got 5000"},
      {queue + "max_time_s = 0", "queues[0].max_time_s: must be 1.."},
      {queue + "default_memory_per_gpu_mib = 0",
       "queues[0].default_memory_per_gpu_mib: must be 1..16777216, got 0"},
      {queue + "default_memory_per_cpu_mib = \"4G\"",
       "queues[0].default_memory_per_cpu_mib: expected an integer"},
      {queue + "default_mem_per_cpu_mib = 4096", "queues[0].default_mem_per_cpu_mib: unknown key"},
      {queue + "allow_users = \"alice\"", "queues[0].allow_users: expected an array"},
      {queue + "allow_groups = [\"cv\", 7]", "queues[0].allow_groups[1]: expected a string"},
      {queue + "allow_users = [\"\"]", "queues.a.allow_users: a name is empty"},
      {queue + "default = 1", "queues[0].default: wrong type"},
      {queue + "default = true\n[[queues]]\nname = \"b\"\ndefault = true",
       "queues.b.default: queue 'a' is the default already"},
      {queue + "max_gpus_per_users = 8", "queues[0].max_gpus_per_users: unknown key"},
      {users + "name = \"alice\"", "users[0].shares: required"},
      {users + "shares = 2", "users[0].name: required"},
      {users + "name = \"alice\"\nshares = 0", "users[0].shares: must be 1..1000000"},
      {users + "name = \"alice\"\nshares = 2\n[[users]]\nname = \"alice\"\nshares = 3",
       "users[1].name: user 'alice' is listed twice"},
      {users + "name = \"alice\"\nshare = 2", "users[0].share: unknown key"},
      {"data_dir = \"/x\"\nusers = 3", "users: expected [[users]] tables"},
  };
  for (const auto& [text, wanted] : cases) {
    Result<ServerConfig> config = ParseConfig(text, "test.toml");
    ASSERT_FALSE(config.ok()) << text;
    EXPECT_THAT(config.status().message(), HasSubstr(wanted)) << text;
  }
}

TEST(ConfigTest, AMissingFileNamesIt) {
  Result<ServerConfig> config = LoadConfig("/nonexistent/berth.toml");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr("/nonexistent/berth.toml"));
}

}  // namespace
}  // namespace berth::server
