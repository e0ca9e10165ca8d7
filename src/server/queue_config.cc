#include "server/queue_config.h"

#include <string>

#include "server/spec_text.h"
#include "server/toml_read.h"

namespace berth::server {
namespace {

using toml_read::Get;
using toml_read::OptionalInteger;
using toml_read::Strings;
using toml_read::Unknown;

constexpr int64_t kMaxGpus = int64_t{1} << 24;
constexpr int64_t kMaxShares = 1'000'000;
constexpr int64_t kMaxTimeSeconds = 10 * 365 * 86400;
// As SubmissionLimits::max_priority: no queue can allow more than the server.
constexpr int64_t kMaxPriority = 1000;
// As SubmissionLimits::max_memory_mib: a default no request could ask.
constexpr int64_t kMaxMemory = int64_t{16} << 20;

// The governance keys of one queue (shares, limits, rules, default).
Status ParseGovernance(const toml::table& table, const std::string& path, core::QueueSpec& spec) {
  BERTH_ASSIGN_OR_RETURN(spec.is_default, Get<bool>(table, path, "default", false));
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> shares,
                         OptionalInteger(table, path, "shares", 1, kMaxShares));
  spec.shares = shares.value_or(1);
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> gpus,
                         OptionalInteger(table, path, "max_gpus_per_user", 1, kMaxGpus));
  if (gpus) spec.max_gpus_per_user = core::WholeGpus(*gpus);
  BERTH_ASSIGN_OR_RETURN(spec.max_running_jobs_per_user,
                         OptionalInteger(table, path, "max_running_jobs_per_user", 1, kMaxGpus));
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> priority,
                         OptionalInteger(table, path, "max_priority", -kMaxPriority, kMaxPriority));
  if (priority) spec.max_priority = static_cast<int32_t>(*priority);
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> time,
                         OptionalInteger(table, path, "max_time_s", 1, kMaxTimeSeconds));
  if (time) spec.max_time = core::Duration::Seconds(*time);
  BERTH_ASSIGN_OR_RETURN(spec.allow_users, Strings(table, path, "allow_users"));
  BERTH_ASSIGN_OR_RETURN(spec.allow_groups, Strings(table, path, "allow_groups"));
  return Status::Ok();
}

// The memory its jobs that ask none get (core/default_memory.h).
Status ParseDefaultMemory(const toml::table& table, const std::string& path,
                          core::QueueSpec& spec) {
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> per_gpu,
                         OptionalInteger(table, path, "default_memory_per_gpu_mib", 1, kMaxMemory));
  if (per_gpu) spec.default_memory.per_gpu = core::MemoryMiB(*per_gpu);
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> per_cpu,
                         OptionalInteger(table, path, "default_memory_per_cpu_mib", 1, kMaxMemory));
  if (per_cpu) spec.default_memory.per_cpu = core::MemoryMiB(*per_cpu);
  return Status::Ok();
}

}  // namespace

Result<std::vector<core::QueueSpec>> ParseQueueArray(const toml::array& array) {
  std::vector<core::QueueSpec> queues;
  for (size_t i = 0; i < array.size(); ++i) {
    const std::string path = "queues[" + std::to_string(i) + "].";
    const toml::table* table = array[i].as_table();
    if (table == nullptr)
      return InvalidArgument(path.substr(0, path.size() - 1) + ": expected a table");
    BERTH_RETURN_IF_ERROR(Unknown(*table, path,
                                  {"name", "parent", "guaranteed_gpus", "ceiling_gpus", "default",
                                   "shares", "max_gpus_per_user", "max_running_jobs_per_user",
                                   "max_priority", "max_time_s", "allow_users", "allow_groups",
                                   "default_memory_per_gpu_mib", "default_memory_per_cpu_mib"}));
    core::QueueSpec spec;
    BERTH_ASSIGN_OR_RETURN(spec.name, Get<std::string>(*table, path, "name", ""));
    BERTH_ASSIGN_OR_RETURN(spec.parent, Get<std::string>(*table, path, "parent", ""));
    BERTH_ASSIGN_OR_RETURN(int64_t guaranteed, Get<int64_t>(*table, path, "guaranteed_gpus", 0));
    BERTH_ASSIGN_OR_RETURN(int64_t ceiling, Get<int64_t>(*table, path, "ceiling_gpus", -1));
    if (guaranteed < 0) return InvalidArgument(path + "guaranteed_gpus: must be >= 0");
    spec.guaranteed = core::WholeGpus(guaranteed);
    if (ceiling >= 0) spec.ceiling = core::WholeGpus(ceiling);
    BERTH_RETURN_IF_ERROR(ParseGovernance(*table, path, spec));
    BERTH_RETURN_IF_ERROR(ParseDefaultMemory(*table, path, spec));
    queues.push_back(std::move(spec));
  }
  if (Result<core::QuotaTree> tree = core::QuotaTree::Make(queues); !tree.ok()) {
    return tree.status();
  }
  return queues;
}

Result<core::ClusterState::UserShares> ParseUserArray(const toml::array& array) {
  core::ClusterState::UserShares shares;
  for (size_t i = 0; i < array.size(); ++i) {
    const std::string path = "users[" + std::to_string(i) + "].";
    const toml::table* table = array[i].as_table();
    if (table == nullptr)
      return InvalidArgument(path.substr(0, path.size() - 1) + ": expected a table");
    BERTH_RETURN_IF_ERROR(Unknown(*table, path, {"name", "shares"}));
    BERTH_ASSIGN_OR_RETURN(std::string name, Get<std::string>(*table, path, "name", ""));
    if (name.empty()) return InvalidArgument(path + "name: required");
    BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> user_shares,
                           OptionalInteger(*table, path, "shares", 1, kMaxShares));
    if (!user_shares) return InvalidArgument(path + "shares: required");
    if (!shares.emplace(name, *user_shares).second) {
      return InvalidArgument(path + "name: user " + spec_text::Quote(name) + " is listed twice");
    }
  }
  return shares;
}

}  // namespace berth::server
