#include "cli/slurm/scontrol_requeue.h"

#include <strings.h>

#include <cstdio>
#include <cstdlib>
#include <optional>

#include "cli/slurm/slurm_client.h"

namespace berth::cli::slurm {
namespace {

using nlohmann::json;

// The Berth job that "12" or "12_3" names; nullopt when the text is no job
// id, or no element of array 12 (a live one, with `live_only`) has index 3.
std::optional<int64_t> ResolveJob(const std::string& command, const ApiClient& client,
                                  const std::string& text, bool live_only) {
  char* end = nullptr;
  const long long job = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || job <= 0) return std::nullopt;
  if (*end == '\0') return job;
  if (*end != '_') return std::nullopt;
  const char* start = end + 1;
  const long long index = std::strtoll(start, &end, 10);
  if (end == start || *end != '\0' || index < 0) return std::nullopt;
  for (const json& found : ListJobs(command, client, live_only ? "&live=true" : "")) {
    const int64_t id = found.value("id", int64_t{0});
    const json& parent = found["array_parent"];
    const json& element = found["array_index"];
    const int64_t head = parent.is_number() ? parent.get<int64_t>() : id;
    if (head == job && element.is_number() && element.get<int64_t>() == index) return id;
  }
  return std::nullopt;
}

}  // namespace

int ScontrolRequeue(const std::string& command, const std::vector<std::string>& args) {
  std::vector<std::string> lists = args;
  // "Incomplete": only jobs that are running, as Slurm's; the others
  // (waiting or ended) are left as they are, without an error.
  const bool incomplete = !lists.empty() && strcasecmp(lists[0].c_str(), "incomplete") == 0;
  if (incomplete) lists.erase(lists.begin());
  if (lists.empty()) Fail(command, "Invalid job id specified");
  const ApiClient client = ConnectOrFail(command);
  int failures = 0;
  for (const std::string& list : lists) {
    for (const std::string& text : SplitList(list)) {
      const std::optional<int64_t> id = ResolveJob(command, client, text, incomplete);
      if (!id) {
        std::fprintf(stderr, "Invalid job id specified for job %s\n", text.c_str());
        ++failures;
        continue;
      }
      if (incomplete) {
        const std::optional<json> job = FindJob(command, client, *id);
        const std::string state = job ? job->value("state", "") : "";
        if (state != "running" && state != "starting") continue;
      }
      // Requeueing twice would stop the next run too: sent once.
      Result<json> reply = client.Post("/api/v1/jobs/" + std::to_string(*id) + "/requeue",
                                       json::object(), follow::Replay::kUnsafe);
      if (reply.ok()) continue;
      ++failures;
      const std::string why = reply.status().code() == StatusCode::kNotFound
                                  ? "Invalid job id specified"
                                  : reply.status().message();
      std::fprintf(stderr, "%s for job %s\n", why.c_str(), text.c_str());
    }
  }
  return failures > 0 ? kSlurmExitError : 0;
}

}  // namespace berth::cli::slurm
