// What every Slurm command of the client needs from the Berth server: the
// connection (found as `berth` finds it: BERTH_ADDR/BERTH_TOKEN, the config
// file, the dev cluster; cli/api_client.h), job listings, the default
// partition, and Slurm-style failure: "squeue: error: ..." and exit 1.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/api_client.h"
#include "cli/slurm/slurm_job.h"

namespace berth::cli::slurm {

// Slurm's commands exit 1 for any error (a bad option included) and print
// "COMMAND: error: MESSAGE".
inline constexpr int kSlurmExitError = 1;
[[noreturn]] void Fail(const std::string& command, const std::string& message);

ApiClient ConnectOrFail(const std::string& command);
nlohmann::json GetOrFail(const std::string& command, const ApiClient& client,
                         const std::string& path);

// Every job matching `query` ("&live=true&user=bob"), oldest first, across pages.
std::vector<nlohmann::json> ListJobs(const std::string& command, const ApiClient& client,
                                     const std::string& query);
// One job, or nullopt if the server does not know it (404).
std::optional<nlohmann::json> FindJob(const std::string& command, const ApiClient& client,
                                      int64_t id);

// The queues as Slurm partitions: names in the server's order and which one
// is the default (a job with no queue runs there). With no queues
// configured, Berth's single implicit queue is the partition "default".
struct Partitions {
  std::vector<std::string> names;
  std::string default_name;
  std::map<std::string, int64_t> max_time_s;  // the queues that have a limit
};
Partitions LoadPartitions(const std::string& command, const ApiClient& client);

// The token's user (for --me, and as Slurm's "current user").
std::string WhoAmI(const std::string& command, const ApiClient& client);

// Splits "a,b,,c" into {"a", "b", "c"}.
std::vector<std::string> SplitList(const std::string& text);

}  // namespace berth::cli::slurm
