#include "cli/slurm/scontrol_update.h"

#include <strings.h>

#include <charconv>

#include "cli/submit_options.h"

namespace berth::cli::slurm {
namespace {

bool KeyIs(const std::string& key, const char* name) { return strcasecmp(key.c_str(), name) == 0; }

Status Unsupported(const std::string& arg) {
  return InvalidArgument("Update of this parameter is not supported: " + arg +
                         " (Berth updates TimeLimit, Partition and Priority)");
}

Result<int64_t> JobIdOf(const std::string& text) {
  int64_t id = 0;
  const char* end = text.data() + text.size();
  auto [at, error] = std::from_chars(text.data(), end, id);
  if (error != std::errc() || at != end || id <= 0) {
    return InvalidArgument("Invalid job id specified: " + text);
  }
  return id;
}

}  // namespace

Result<ScontrolUpdate> ParseScontrolUpdate(const std::vector<std::string>& args) {
  ScontrolUpdate update;
  update.body = nlohmann::json::object();
  for (const std::string& arg : args) {
    const size_t equals = arg.find('=');
    if (equals == std::string::npos || equals == 0) return Unsupported(arg);
    const std::string key = arg.substr(0, equals);
    const std::string value = arg.substr(equals + 1);
    if (KeyIs(key, "JobId")) {
      size_t start = 0;
      while (start <= value.size()) {
        const size_t comma = value.find(',', start);
        const std::string one =
            value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        BERTH_ASSIGN_OR_RETURN(int64_t id, JobIdOf(one));
        update.jobs.push_back(id);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else if (KeyIs(key, "TimeLimit")) {
      if (!value.empty() && (value[0] == '+' || value[0] == '-')) {
        return InvalidArgument("TimeLimit=" + value +
                               ": Berth takes a new limit, not a change to the current one");
      }
      Result<int64_t> seconds = ParseDuration(value, "TimeLimit");
      if (!seconds.ok()) return InvalidArgument("Invalid TimeLimit value: " + value);
      update.body["time_limit_s"] = *seconds;
    } else if (KeyIs(key, "Partition")) {
      if (value.empty() || value.find(',') != std::string::npos) {
        return InvalidArgument("Partition=" + value + ": Berth takes one partition (a queue)");
      }
      update.body["queue"] = value;
    } else if (KeyIs(key, "Priority")) {
      int64_t priority = 0;
      const char* end = value.data() + value.size();
      auto [at, error] = std::from_chars(value.data(), end, priority);
      if (error != std::errc() || at != end) {
        return InvalidArgument("Invalid Priority value: " + value);
      }
      update.body["priority"] = priority;
    } else {
      return Unsupported(arg);
    }
  }
  if (update.jobs.empty()) return InvalidArgument("No job identification provided (JobId=)");
  if (update.body.empty()) {
    return InvalidArgument("Nothing to update: expected TimeLimit=, Partition= or Priority=");
  }
  return update;
}

std::string SlurmRefusal(const Status& status) {
  std::string words;
  switch (status.code()) {
    case StatusCode::kNotFound:
      return "Invalid job id specified";
    case StatusCode::kPermissionDenied:
      words = "Access/permission denied";
      break;
    case StatusCode::kFailedPrecondition:
      words = status.message().find("already ended") != std::string::npos
                  ? "Job/step already completing or completed"
                  : "Job is no longer pending execution";
      break;
    case StatusCode::kInvalidArgument:
      words = "Invalid argument";
      break;
    default:
      return status.message();
  }
  return words + " (" + status.message() + ")";
}

std::string SlurmWords(const Status& status) {
  const std::string refusal = SlurmRefusal(status);
  const size_t detail = refusal.find(" (");
  return status.code() == StatusCode::kPermissionDenied ||
                 status.code() == StatusCode::kFailedPrecondition
             ? refusal.substr(0, detail)
             : refusal;
}

}  // namespace berth::cli::slurm
