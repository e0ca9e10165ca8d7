// scontrol: `show job`, `show node`, `hold`, `release` and `update` on
// Berth; what Berth's API cannot do (requeue) fails naming what is missing
// (docs/from-slurm.md).
#include <pwd.h>
#include <strings.h>

#include <cctype>
#include <cstdio>
#include <ctime>

#include "cli/slurm/scontrol_job.h"
#include "cli/slurm/scontrol_requeue.h"
#include "cli/slurm/scontrol_update.h"
#include "cli/slurm/sinfo_rows.h"
#include "cli/slurm/slurm_client.h"
#include "cli/slurm/slurm_commands.h"

namespace berth::cli::slurm {
namespace {

using nlohmann::json;

constexpr char kUsage[] =
    "Usage: scontrol [-o] show job [ID] | show node [NAME] | hold ID... | release ID...\n"
    "       | update JobId=ID [TimeLimit=T] [Partition=P] [Priority=N] | requeue ID...\n"
    "Berth's jobs and nodes in Slurm's scontrol form (docs/from-slurm.md).\n";

std::string Uid(const std::string& user) {
  struct passwd entry {};
  struct passwd* found = nullptr;
  char buffer[4096];
  if (getpwnam_r(user.c_str(), &entry, buffer, sizeof(buffer), &found) != 0 || found == nullptr) {
    return "";
  }
  return std::to_string(found->pw_uid);
}

core::Time Now() {
  return core::Time::FromMicros(static_cast<int64_t>(std::time(nullptr)) * 1'000'000);
}

int ShowJob(const std::string& command, const std::vector<std::string>& args, Lines lines) {
  const ApiClient client = ConnectOrFail(command);
  const Partitions partitions = LoadPartitions(command, client);
  std::vector<json> jobs;
  if (args.empty()) {
    jobs = ListJobs(command, client, "&live=true");
    if (jobs.empty()) {
      std::puts("No jobs in the system");
      return 0;
    }
  } else {
    char* end = nullptr;
    const long long id = std::strtoll(args[0].c_str(), &end, 10);
    std::optional<json> job = id > 0 && *end == '\0' ? FindJob(command, client, id) : std::nullopt;
    if (!job) {
      std::fputs("slurm_load_jobs error: Invalid job id specified\n", stderr);
      return kSlurmExitError;
    }
    // An array's id names all its elements, as Slurm's records of it.
    const bool array = job->value("array_parent", json()) == json(id);
    jobs.push_back(std::move(*job));
    if (array) {
      for (json& element : ListJobs(command, client, "")) {
        if (element.value("array_parent", json()) == json(id) && element.value("id", 0LL) != id) {
          jobs.push_back(std::move(element));
        }
      }
    }
  }
  std::vector<SlurmJob> shown;
  for (const json& job : jobs) shown.push_back(SlurmJobFromJson(job, partitions.default_name));
  std::string out;
  for (const SlurmJob& job : FoldPendingArrayElements(std::move(shown))) {
    out += ScontrolJob(job, Now(), Uid(job.user), lines);
    if (lines == Lines::kMany) out += "\n";
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

int ShowNode(const std::string& command, const std::vector<std::string>& args, Lines lines) {
  const ApiClient client = ConnectOrFail(command);
  const json reply = GetOrFail(command, client, "/api/v1/nodes");
  std::string out;
  bool found = false;
  for (const json& node : reply["nodes"]) {
    const std::string name = node.value("name", "");
    if (!args.empty() && name != args[0]) continue;
    found = true;
    int64_t alloc = 0;
    for (const json& gpu : node["gpus"]) {
      if (gpu.contains("job") && gpu["job"].is_number()) ++alloc;
    }
    const int64_t gpus = static_cast<int64_t>(node["gpus"].size());
    const std::string type = node.value("gpu_type", "");
    const std::string gres =
        gpus == 0 ? "(null)" : "gpu:" + (type.empty() ? "" : type + ":") + std::to_string(gpus);
    const std::vector<std::vector<std::string>> groups = {
        {"NodeName=" + name, "Arch=x86_64", "CoresPerSocket=1"},
        {"CPUTot=" + std::to_string(node.value("cpu_milli", int64_t{0}) / 1000)},
        {"AvailableFeatures=" + std::string(node["features"].empty() ? "(null)" : "")},
        {"Gres=" + gres},
        {"NodeAddr=" + node.value("address", name), "NodeHostName=" + name},
        {"RealMemory=" + std::to_string(node.value("memory_mib", int64_t{0}))},
        {"State=" +
         [&] {
           std::string state = MapNodeState(node).name;
           for (char& c : state) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
           return state;
         }()},
        {"CfgTRES=gres/gpu=" + std::to_string(gpus)},
        {"AllocTRES=" + (alloc > 0 ? "gres/gpu=" + std::to_string(alloc) : std::string())},
    };
    std::string text;
    for (size_t g = 0; g < groups.size(); ++g) {
      if (g > 0) text += lines == Lines::kOne ? " " : "\n   ";
      for (size_t i = 0; i < groups[g].size(); ++i) text += (i > 0 ? " " : "") + groups[g][i];
    }
    // AvailableFeatures lists the node's features, comma-separated.
    if (!node["features"].empty()) {
      std::string features;
      for (const json& feature : node["features"]) {
        features += (features.empty() ? "" : ",") + feature.get<std::string>();
      }
      const size_t at = text.find("AvailableFeatures=") + std::string("AvailableFeatures=").size();
      text.insert(at, features);
    }
    out += text + "\n" + (lines == Lines::kMany ? "\n" : "");
  }
  if (!found) {
    std::fprintf(stderr, "Node %s not found\n", args.empty() ? "" : args[0].c_str());
    return kSlurmExitError;
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

// hold (uhold) and release: one POST per job id, each failure on its own
// line as Slurm prints it; exit 1 if any failed.
int JobAction(const std::string& command, const std::vector<std::string>& ids,
              const std::string& action) {
  if (ids.empty()) Fail(command, "Invalid job id specified");
  const ApiClient client = ConnectOrFail(command);
  int failures = 0;
  for (const std::string& text : SplitList(ids[0])) {
    char* end = nullptr;
    const long long id = std::strtoll(text.c_str(), &end, 10);
    if (id <= 0 || *end != '\0') {
      std::fprintf(stderr, "Invalid job id specified for job %s\n", text.c_str());
      ++failures;
      continue;
    }
    Result<json> reply =
        client.Post("/api/v1/jobs/" + text + "/" + action, json::object(), follow::Replay::kSafe);
    if (reply.ok()) continue;
    ++failures;
    const std::string why = reply.status().code() == StatusCode::kNotFound
                                ? "Invalid job id specified"
                            : action == "hold" ? SlurmWords(reply.status())
                                               : reply.status().message();
    std::fprintf(stderr, "%s for job %s\n", why.c_str(), text.c_str());
  }
  return failures > 0 ? kSlurmExitError : 0;
}

// update JobId=N TimeLimit= Partition= Priority=: one PATCH per job;
// nothing printed when all went well, as Slurm.
int Update(const std::string& command, const std::vector<std::string>& args) {
  Result<ScontrolUpdate> update = ParseScontrolUpdate(args);
  if (!update.ok()) {
    std::fprintf(stderr, "%s\nRequest aborted\n", update.status().message().c_str());
    return kSlurmExitError;
  }
  const ApiClient client = ConnectOrFail(command);
  int failures = 0;
  for (int64_t id : update->jobs) {
    Result<json> reply = client.Patch("/api/v1/jobs/" + std::to_string(id), update->body);
    if (reply.ok()) continue;
    ++failures;
    std::fprintf(stderr, "slurm_update error: %s\n", SlurmRefusal(reply.status()).c_str());
  }
  return failures > 0 ? kSlurmExitError : 0;
}

}  // namespace

int Scontrol(int argc, char** argv) {
  const std::string command = argv[0];
  Lines lines = Lines::kMany;
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-o" || arg == "--oneliner") {
      lines = Lines::kOne;
    } else if (arg == "-d" || arg == "--details" || arg == "-Q" || arg == "--quiet") {
      // Berth's jobs have no per-node detail lines; quiet is the default.
    } else if (arg == "-h" || arg == "--help" || arg == "--usage") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr,
                   "%s: unrecognized option '%s'\nTry \"scontrol --help\" for more information\n",
                   command.c_str(), arg.c_str());
      return kSlurmExitError;
    } else {
      args.push_back(arg);
    }
  }
  if (args.empty()) {
    std::fputs(kUsage, stderr);
    return kSlurmExitError;
  }
  const std::string verb = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (strcasecmp(verb.c_str(), "show") == 0 && !rest.empty()) {
    const std::vector<std::string> what(rest.begin() + 1, rest.end());
    const std::string entity = rest[0];
    if (strcasecmp(entity.c_str(), "job") == 0 || strcasecmp(entity.c_str(), "jobs") == 0) {
      return ShowJob(command, what, lines);
    }
    if (strcasecmp(entity.c_str(), "node") == 0 || strcasecmp(entity.c_str(), "nodes") == 0) {
      return ShowNode(command, what, lines);
    }
    std::fprintf(stderr, "invalid entity: %s for keyword: show\n", entity.c_str());
    return kSlurmExitError;
  }
  if (strcasecmp(verb.c_str(), "release") == 0) return JobAction(command, rest, "release");
  if (strcasecmp(verb.c_str(), "hold") == 0 || strcasecmp(verb.c_str(), "uhold") == 0) {
    return JobAction(command, rest, "hold");
  }
  if (strcasecmp(verb.c_str(), "update") == 0) return Update(command, rest);
  if (strcasecmp(verb.c_str(), "requeue") == 0) return ScontrolRequeue(command, rest);
  std::fprintf(stderr, "invalid keyword: %s\n", verb.c_str());
  return kSlurmExitError;
}

}  // namespace berth::cli::slurm
