#include "cli/slurm/slurm_client.h"

#include <cstdio>
#include <cstdlib>

namespace berth::cli::slurm {

using nlohmann::json;

void Fail(const std::string& command, const std::string& message) {
  std::fprintf(stderr, "%s: error: %s\n", command.c_str(), message.c_str());
  std::exit(kSlurmExitError);
}

namespace {

// Slurm's words for a controller it cannot reach, with Berth's detail.
std::string Describe(const Status& status) {
  if (status.code() == StatusCode::kUnavailable) {
    return "Unable to contact the Berth server (" + status.message() + ")";
  }
  return status.message();
}

}  // namespace

ApiClient ConnectOrFail(const std::string& command) {
  Result<ApiClient> client = ApiClient::FromFlags(ClientFlags{});
  if (!client.ok()) Fail(command, Describe(client.status()));
  return std::move(*client);
}

json GetOrFail(const std::string& command, const ApiClient& client, const std::string& path) {
  Result<json> reply = client.Get(path);
  if (!reply.ok()) Fail(command, Describe(reply.status()));
  return std::move(*reply);
}

std::vector<json> ListJobs(const std::string& command, const ApiClient& client,
                           const std::string& query) {
  std::vector<json> jobs;
  int64_t after = 0;
  while (true) {
    json page = GetOrFail(command, client,
                          "/api/v1/jobs?limit=1000&after=" + std::to_string(after) + query);
    for (json& job : page["jobs"]) jobs.push_back(std::move(job));
    if (!page.contains("next_after")) break;
    after = page["next_after"].get<int64_t>();
  }
  return jobs;
}

std::optional<json> FindJob(const std::string& command, const ApiClient& client, int64_t id) {
  Result<json> reply = client.Get("/api/v1/jobs/" + std::to_string(id));
  if (reply.ok()) return std::move(*reply);
  if (reply.status().code() == StatusCode::kNotFound) return std::nullopt;
  Fail(command, Describe(reply.status()));
}

Partitions LoadPartitions(const std::string& command, const ApiClient& client) {
  const json reply = GetOrFail(command, client, "/api/v1/queues");
  Partitions partitions;
  if (const auto it = reply.find("queues"); it != reply.end() && it->is_array()) {
    for (const json& queue : *it) {
      const std::string name = queue.value("name", "");
      if (name.empty()) continue;
      partitions.names.push_back(name);
      if (queue.value("default", false)) partitions.default_name = name;
      if (queue["max_time_s"].is_number_integer()) {
        partitions.max_time_s[name] = queue["max_time_s"].get<int64_t>();
      }
    }
  }
  if (partitions.default_name.empty()) {
    partitions.default_name = "default";
    partitions.names.insert(partitions.names.begin(), "default");
  }
  return partitions;
}

std::string WhoAmI(const std::string& command, const ApiClient& client) {
  return GetOrFail(command, client, "/api/v1/whoami").value("user", "");
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) items.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return items;
}

}  // namespace berth::cli::slurm
