#include "cli/dev_agents.h"

#include <httplib.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/constraint.h"

namespace berth::cli {
namespace {

using nlohmann::json;

Result<std::string> IssueAgentToken(const DevAgentsOptions& options, const std::string& node) {
  std::ifstream in(options.data_dir + "/admin-token");
  std::string admin;
  if (!in || !std::getline(in, admin)) {
    return Unavailable("cannot read " + options.data_dir + "/admin-token");
  }
  httplib::Client client(options.server_url);
  client.set_bearer_token_auth(admin);
  const json body{{"user", "agent-" + node}, {"role", "agent"}, {"node", node}};
  httplib::Result reply = client.Post("/api/v1/tokens", body.dump(), "application/json");
  if (!reply || reply->status != 201) {
    return Unavailable("cannot issue a token for " + node + ": " +
                       (reply ? reply->body : httplib::to_string(reply.error())));
  }
  const json token = json::parse(reply->body, nullptr, false);
  if (!token.is_object() || !token.contains("token")) {
    return Internal("token reply without a token: " + reply->body);
  }
  return token["token"].get<std::string>();
}

// fork + exec with the kernel's promise that the child hears of our death.
// Between fork and exec only async-signal-safe calls (we have threads).
Result<pid_t> SpawnAgent(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);  // we died between fork and prctl
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  if (pid < 0) return Unavailable("fork failed");
  return pid;
}

}  // namespace

Result<DevFeature> ParseDevFeature(const std::string& text, int nodes) {
  const size_t at = text.find('@');
  DevFeature feature{text.substr(0, at), at == std::string::npos ? "" : text.substr(at + 1)};
  if (!core::IsFeatureName(feature.name)) {
    return InvalidArgument("--feature: '" + feature.name +
                           "' is not a feature name (1..64 of A-Z a-z 0-9 _ - . : / + =)");
  }
  if (at == std::string::npos) return feature;
  for (int i = 1; i <= nodes; ++i) {
    if (feature.node == "node-" + std::to_string(i)) return feature;
  }
  const std::string known =
      nodes > 0 ? "node-1..node-" + std::to_string(nodes) : std::string("it has none");
  return InvalidArgument("--feature: '" + text + "' names no node of this cluster (" + known + ")");
}

Result<std::unique_ptr<DevAgents>> DevAgents::Start(const DevAgentsOptions& options) {
  std::unique_ptr<DevAgents> agents(new DevAgents());
  for (int i = 1; i <= options.nodes; ++i) {
    const std::string node = "node-" + std::to_string(i);
    const std::string dir = options.data_dir + "/agents/" + node;
    std::error_code error;
    std::filesystem::create_directories(dir, error);
    if (error) return Unavailable("cannot create " + dir + ": " + error.message());
    BERTH_ASSIGN_OR_RETURN(std::string token, IssueAgentToken(options, node));
    const std::string token_file = dir + "/token";
    {
      std::ofstream out(token_file, std::ios::trunc);
      out << token << "\n";
      if (!out) return Unavailable("cannot write " + token_file);
    }
    ::chmod(token_file.c_str(), 0600);
    std::vector<std::string> argv = {"/proc/self/exe",
                                     "agent",
                                     "--server",
                                     options.server_url,
                                     "--token-file",
                                     token_file,
                                     "--node",
                                     node,
                                     "--listen",
                                     "127.0.0.1:0",
                                     "--state-dir",
                                     dir,
                                     "--fake-gpus",
                                     options.fake_gpus,
                                     "--fake-topology",
                                     std::to_string(options.fake_topology),
                                     "--heartbeat-interval",
                                     options.heartbeat_interval};
    if (options.stop_tasks_on_exit) argv.push_back("--stop-tasks-on-exit");
    if (options.allow_root_jobs) argv.push_back("--allow-root-jobs");
    for (const DevFeature& feature : options.features) {
      if (!feature.node.empty() && feature.node != node) continue;
      argv.push_back("--feature");
      argv.push_back(feature.name);
    }
    Result<pid_t> pid = SpawnAgent(std::move(argv));
    if (!pid.ok()) return pid.status();
    std::fprintf(stderr, "berth dev: agent for %s started (pid %d, state in %s)\n", node.c_str(),
                 *pid, dir.c_str());
    agents->children_.push_back(Child{node, *pid, true});
  }
  return agents;
}

DevAgents::~DevAgents() { Stop(); }

void DevAgents::Reap() {
  for (Child& child : children_) {
    if (!child.running) continue;
    int status = 0;
    if (::waitpid(child.pid, &status, WNOHANG) != child.pid) continue;
    child.running = false;
    if (WIFSIGNALED(status)) {
      std::fprintf(stderr, "berth dev: agent for %s (pid %d) was killed by signal %d\n",
                   child.node.c_str(), child.pid, WTERMSIG(status));
    } else {
      std::fprintf(stderr, "berth dev: agent for %s (pid %d) exited with %d\n", child.node.c_str(),
                   child.pid, WEXITSTATUS(status));
    }
  }
}

void DevAgents::Stop() {
  for (const Child& child : children_) {
    if (child.running) ::kill(child.pid, SIGTERM);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (true) {
    Reap();
    bool any = false;
    for (const Child& child : children_) any |= child.running;
    if (!any) return;
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (Child& child : children_) {
    if (!child.running) continue;
    ::kill(child.pid, SIGKILL);
    ::waitpid(child.pid, nullptr, 0);
    child.running = false;
  }
}

}  // namespace berth::cli
