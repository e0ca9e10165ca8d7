// `berth nodes | drain | undrain | usage`.
#include <cstdio>
#include <memory>
#include <tuple>

#include "cli/api_client.h"
#include "cli/client_commands.h"
#include "cli/table.h"
#include "cli/time_arg.h"

namespace berth::cli {
namespace {

using nlohmann::json;

// One character-group per GPU: the job holding it, "." free, "x" unhealthy.
std::string GpuGrid(const json& gpus) {
  std::string grid;
  for (const json& gpu : gpus) {
    std::string cell = !gpu.value("healthy", true) ? "x"
                       : gpu["job"].is_number()    ? std::to_string(gpu["job"].get<int64_t>())
                                                   : ".";
    grid += "[" + cell + "]";
  }
  return grid;
}

void RunNodes(const ClientFlags& flags) {
  const ApiClient client = ConnectOrExit("nodes", flags);
  Result<json> reply = client.Get("/api/v1/nodes");
  if (!reply.ok()) Exit("nodes", reply.status());
  if (flags.json) return (void)std::printf("%s\n", (*reply)["nodes"].dump(2).c_str());
  Table table({"NODE", "STATE", "TYPE", "FREE", "FEATURES", "CONTAINERS",
               "GPUS (job id, . free, x unhealthy)"});
  for (const json& node : (*reply)["nodes"]) {
    int64_t free = 0;
    for (const json& gpu : node["gpus"]) {
      if (gpu.value("healthy", true) && !gpu["job"].is_number()) ++free;
    }
    const std::string state = node.value("state", "");
    table.Add({{node.value("name", "")},
               {state, StateColor(state)},
               {node.value("gpu_type", "")},
               {std::to_string(free) + "/" + std::to_string(node["gpus"].size())},
               {NodeFeatures(node)},
               {node["container_runtime"].is_string() ? node["container_runtime"].get<std::string>()
                                                      : "-"},
               {GpuGrid(node["gpus"])}});
  }
  std::fputs(table.Render(ColorOutput()).c_str(), stdout);
}

void RunDrain(const std::string& action, const ClientFlags& flags, const std::string& node) {
  const ApiClient client = ConnectOrExit(action, flags);
  // Draining (or undraining) twice does what once does: safe to resend.
  Result<json> reply =
      client.Post("/api/v1/nodes/" + node + "/" + action, json::object(), follow::Replay::kSafe);
  if (!reply.ok()) Exit(action, reply.status());
  if (flags.json) std::printf("%s\n", reply->dump().c_str());
}

struct UsageFlags {
  ClientFlags client;
  std::string from;  // ParseTimeArg's forms; empty: the server's default
  std::string to;
};

void RunUsage(const UsageFlags& flags) {
  std::string path = "/api/v1/usage?";
  for (const auto& [name, flag, text] :
       {std::tuple{"from", "--from", flags.from}, std::tuple{"to", "--to", flags.to}}) {
    if (text.empty()) continue;
    Result<int64_t> seconds = ParseTimeArg(text, flag);
    if (!seconds.ok()) Exit("usage", seconds.status());
    path += std::string(name) + "=" + std::to_string(*seconds) + "&";
  }
  const ApiClient client = ConnectOrExit("usage", flags.client);
  Result<json> reply = client.Get(path);
  if (!reply.ok()) Exit("usage", reply.status());
  if (flags.client.json) return (void)std::printf("%s\n", reply->dump(2).c_str());
  for (const auto& [key, label] : {std::pair{"by_user", "USER"}, std::pair{"by_queue", "QUEUE"}}) {
    Table table({label, "GPU-HOURS"});
    const std::string field = key == std::string("by_user") ? "user" : "queue";
    for (const json& row : (*reply)[key]) {
      char hours[32];
      std::snprintf(hours, sizeof(hours), "%.2f", row.value("gpu_hours", 0.0));
      const std::string name = row.value(field, "");
      table.Add({{name.empty() ? "(default)" : name}, {hours}});
    }
    std::fputs(table.Render(ColorOutput()).c_str(), stdout);
    std::fputs("\n", stdout);
  }
}

}  // namespace

void AddClusterCommands(CLI::App& app) {
  auto nodes = std::make_shared<ClientFlags>();
  CLI::App* nodes_app = app.add_subcommand("nodes", "Every node, its features and its GPUs");
  AddClientFlags(*nodes_app, *nodes);
  nodes_app->callback([nodes] { RunNodes(*nodes); });

  for (const std::string action : {"drain", "undrain"}) {
    auto flags = std::make_shared<std::pair<ClientFlags, std::string>>();
    CLI::App* sub = app.add_subcommand(
        action, action == "drain" ? "Stop new work on a node (admins); running jobs finish"
                                  : "Let a drained node take work again (admins)");
    sub->add_option("node", flags->second, "Node name")->required();
    AddClientFlags(*sub, flags->first);
    sub->callback([flags, action] { RunDrain(action, flags->first, flags->second); });
  }

  auto usage = std::make_shared<UsageFlags>();
  CLI::App* usage_app = app.add_subcommand("usage", "GPU-hours by user and by queue");
  usage_app->add_option("--from", usage->from,
                        "Start: 2026-12-03, 2026-12-03T14:30:00Z or +02:00, or unix seconds "
                        "(default: 30 days ago)");
  usage_app->add_option("--to", usage->to, "End, as --from (default: now)");
  AddClientFlags(*usage_app, usage->client);
  usage_app->callback([usage] { RunUsage(*usage); });
}

}  // namespace berth::cli
