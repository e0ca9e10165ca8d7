#include "sim_fleet.h"

#include <fmt/format.h>
#include <httplib.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "protocol/desired_json.h"
#include "protocol/report_json.h"

namespace berth::bench {

using Key = std::tuple<int64_t, int32_t, int32_t>;  // job, task, attempt

struct SimFleet::Task {
  SimFleet::Clock::time_point ends;
  int32_t gpus = 0;
  bool exited = false;
  std::optional<int32_t> exit_code;
  std::optional<int32_t> signal;
};

struct SimFleet::Node {
  int index = 0;
  std::string name;
  std::string token;
  SimFleet::Clock::time_point next_heartbeat;
  std::map<Key, Task> tasks;
};

namespace {

// How long a task "runs": the S of `sleep S`, else a minute.
std::chrono::milliseconds Duration(const protocol::TaskLaunch& launch) {
  if (launch.command.size() == 2 && launch.command[0] == "sleep") {
    try {
      return std::chrono::milliseconds(static_cast<int64_t>(std::stod(launch.command[1]) * 1000));
    } catch (const std::exception&) {
    }
  }
  return std::chrono::minutes(1);
}

}  // namespace

SimFleet::SimFleet(FleetOptions options, std::vector<std::string> tokens)
    : options_(std::move(options)), tokens_(std::move(tokens)) {}

SimFleet::~SimFleet() { Stop(); }

std::string SimFleet::NodeName(int index) { return fmt::format("sim-{:05d}", index); }

void SimFleet::Start() {
  const auto now = Clock::now();
  for (int i = 0; i < options_.nodes; ++i) {
    auto node = std::make_unique<Node>();
    node->index = i;
    node->name = NodeName(i);
    node->token = tokens_.at(static_cast<size_t>(i));
    node->next_heartbeat = now + options_.heartbeat_interval * i / std::max(options_.nodes, 1);
    nodes_.push_back(std::move(node));
  }
  for (int t = 0; t < options_.threads; ++t) threads_.emplace_back([this, t] { Run(t); });
}

void SimFleet::Stop() {
  stopping_ = true;
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

void SimFleet::Run(int thread) {
  httplib::Client client("127.0.0.1", options_.port);
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);  // headers and body leave without waiting for an ACK
  client.set_read_timeout(std::chrono::seconds(60));
  std::vector<Node*> mine;
  for (size_t i = static_cast<size_t>(thread); i < nodes_.size();
       i += static_cast<size_t>(options_.threads)) {
    mine.push_back(nodes_[i].get());
  }
  for (Node* node : mine) {
    protocol::NodeRegistration registration;
    registration.node = node->name;
    registration.address = "";  // serves no logs and takes no wake calls
    registration.logs_key = "unused";
    registration.gpu_type = options_.gpu_type;
    for (int g = 0; g < options_.gpus_per_node; ++g) {
      registration.gpus.push_back(protocol::GpuReport{g, g / 4, true});
    }
    registration.cpu = core::MilliCpu(128'000);
    registration.memory = core::MemoryMiB(1'024'000);
    while (!stopping_) {
      auto result =
          client.Post("/api/v1/agent/register", {{"Authorization", "Bearer " + node->token}},
                      protocol::RegistrationJson(registration).dump(), "application/json");
      if (result && result->status == 200) break;
      ++failures_;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ++registered_;
  }
  while (!stopping_) {
    Clock::time_point next = Clock::now() + options_.heartbeat_interval;
    for (Node* node : mine) {
      if (stopping_) return;
      if (Clock::now() >= node->next_heartbeat) {
        Heartbeat(*node, client);
        node->next_heartbeat += options_.heartbeat_interval;
      }
      next = std::min(next, node->next_heartbeat);
    }
    std::this_thread::sleep_until(std::min(next, Clock::now() + std::chrono::milliseconds(50)));
  }
}

void SimFleet::Heartbeat(Node& node, httplib::Client& client) {
  const auto now = Clock::now();
  protocol::Heartbeat heartbeat;
  heartbeat.node = node.name;
  std::vector<Key> reported_exits;
  for (auto& [key, task] : node.tasks) {
    if (!task.exited && now >= task.ends) {
      task.exited = true;
      task.exit_code = 0;
      busy_gpus_ -= task.gpus;
      ++exits_;
    }
    protocol::TaskReport report;
    report.job = static_cast<core::JobId>(std::get<0>(key));
    report.task = std::get<1>(key);
    report.attempt = std::get<2>(key);
    report.phase = task.exited ? protocol::TaskPhase::kExited : protocol::TaskPhase::kRunning;
    report.exit_code = task.exit_code;
    report.signal = task.signal;
    heartbeat.tasks.push_back(report);
    if (task.exited) reported_exits.push_back(key);
  }
  auto result = client.Post("/api/v1/agent/heartbeat", {{"Authorization", "Bearer " + node.token}},
                            protocol::HeartbeatJson(heartbeat).dump(), "application/json");
  if (!result || result->status != 200) {
    ++failures_;
    return;
  }
  ++heartbeats_;
  Result<protocol::DesiredState> desired =
      protocol::ParseDesired(nlohmann::json::parse(result->body, nullptr, false));
  if (!desired.ok()) {
    ++failures_;
    return;
  }
  std::set<Key> wanted;
  for (const protocol::TaskAssignment& run : desired->run) {
    const Key key{core::Value(run.job), run.task, run.attempt};
    wanted.insert(key);
    if (node.tasks.contains(key)) continue;
    Task task;
    task.ends = now + Duration(run.launch);
    task.gpus = static_cast<int32_t>(run.gpus.size());
    node.tasks.emplace(key, task);
    busy_gpus_ += task.gpus;
    ++starts_;
    last_start_ = now.time_since_epoch().count();
  }
  for (const protocol::TaskStop& stop : desired->stop) {
    auto it = node.tasks.find(Key{core::Value(stop.job), stop.task, stop.attempt});
    if (it == node.tasks.end() || it->second.exited) continue;
    it->second.exited = true;
    it->second.signal = 15;  // stops at once, well within any grace
    busy_gpus_ -= it->second.gpus;
    ++exits_;
  }
  // An exit reported and no longer asked for is acknowledged: forget it.
  for (const Key& key : reported_exits) {
    if (!wanted.contains(key)) node.tasks.erase(key);
  }
}

}  // namespace berth::bench
