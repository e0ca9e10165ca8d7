// scancel: cancels Berth jobs, or signals them (--signal), as Slurm's
// scancel does (docs/from-slurm.md).
#include <getopt.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "cli/slurm/slurm_client.h"
#include "cli/slurm/slurm_commands.h"
#include "cli/slurm/slurm_states.h"
#include "protocol/signal_name.h"

namespace berth::cli::slurm {
namespace {

using nlohmann::json;

struct ScancelOptions {
  std::vector<std::string> ids;
  std::string user;
  bool me = false;
  std::string name;
  std::vector<std::string> states;  // Slurm's long names
  std::vector<std::string> partitions;
  std::string signal;  // canonical (protocol/signal_name.h); empty: cancel
  bool batch_only = false;
  bool quiet = false;
  bool verbose = false;
};

constexpr char kUsage[] =
    "Usage: scancel [-s SIGNAL [-b]] [-u USER] [--me] [-n NAME] [-t STATE] [-p PARTITION] [-v]\n"
    "               [JOBID[_INDEX]...]\n"
    "Cancels Berth jobs as Slurm's scancel (docs/from-slurm.md).\n";

ScancelOptions ParseOptions(int argc, char** argv) {
  enum { kMe = 1000, kHelp, kUsageOpt };
  static const option kLong[] = {{"user", required_argument, nullptr, 'u'},
                                 {"me", no_argument, nullptr, kMe},
                                 {"name", required_argument, nullptr, 'n'},
                                 {"jobname", required_argument, nullptr, 'n'},
                                 {"state", required_argument, nullptr, 't'},
                                 {"states", required_argument, nullptr, 't'},
                                 {"partition", required_argument, nullptr, 'p'},
                                 {"signal", required_argument, nullptr, 's'},
                                 {"quiet", no_argument, nullptr, 'Q'},
                                 {"full", no_argument, nullptr, 'f'},
                                 {"batch", no_argument, nullptr, 'b'},
                                 {"verbose", no_argument, nullptr, 'v'},
                                 {"help", no_argument, nullptr, kHelp},
                                 {"usage", no_argument, nullptr, kUsageOpt},
                                 {nullptr, 0, nullptr, 0}};
  ScancelOptions options;
  optind = 1;
  int c = 0;
  while ((c = getopt_long(argc, argv, "u:n:t:p:s:Qfbv", kLong, nullptr)) != -1) {
    switch (c) {
      case 'u':
        options.user = optarg;
        break;
      case kMe:
        options.me = true;
        break;
      case 'n':
        options.name = optarg;
        break;
      case 't':
        for (const std::string& word : SplitList(optarg)) {
          Result<std::vector<std::string>> states = ParseStateFilter(word);
          if (!states.ok()) Fail(argv[0], "Invalid job state specified: " + word);
          options.states.insert(options.states.end(), states->begin(), states->end());
        }
        break;
      case 'p':
        for (std::string& part : SplitList(optarg)) options.partitions.push_back(std::move(part));
        break;
      case 's': {
        const std::optional<std::string> name = protocol::CanonicalSignalName(optarg);
        if (!name) Fail(argv[0], std::string("Invalid job signal: ") + optarg);
        options.signal = *name;
        break;
      }
      case 'Q':
        options.quiet = true;
        break;
      case 'v':
        options.verbose = true;
        break;
      case 'b':
        options.batch_only = true;  // only the batch shell: task 0's main process
        break;
      case 'f':
        break;  // without -b Berth signals every process of a job's tasks, as --full
      case kHelp:
      case kUsageOpt:
        std::fputs(kUsage, stdout);
        std::exit(0);
      default:
        std::fprintf(stderr, "Try \"%s --help\" for more information\n", argv[0]);
        std::exit(kSlurmExitError);
    }
  }
  for (int i = optind; i < argc; ++i) options.ids.emplace_back(argv[i]);
  return options;
}

// A job id as the user wrote it: "12" or "12_3", with its numbers.
struct JobIdArg {
  int64_t job = 0;
  std::optional<int64_t> index;
};

std::optional<JobIdArg> ParseJobIdArg(const std::string& text) {
  JobIdArg arg;
  char* end = nullptr;
  arg.job = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || arg.job <= 0) return std::nullopt;
  if (*end == '_') {
    const char* start = end + 1;
    const int64_t index = std::strtoll(start, &end, 10);
    if (end == start || index < 0) return std::nullopt;
    arg.index = index;
  }
  if (*end != '\0') return std::nullopt;
  return arg;
}

}  // namespace

int Scancel(int argc, char** argv) {
  const std::string command = argv[0];
  ScancelOptions options = ParseOptions(argc, argv);
  const bool filtered = !options.user.empty() || options.me || !options.name.empty() ||
                        !options.states.empty() || !options.partitions.empty();
  if (options.ids.empty() && !filtered) Fail(command, "No job identification provided");
  std::vector<JobIdArg> ids;
  for (const std::string& text : options.ids) {
    std::optional<JobIdArg> id = ParseJobIdArg(text);
    if (!id) Fail(command, "Invalid job id " + text);
    ids.push_back(*id);
  }

  const ApiClient client = ConnectOrFail(command);
  if (options.me) options.user = WhoAmI(command, client);
  const Partitions partitions = LoadPartitions(command, client);
  // The live jobs, when filters or arrays need them. Tools cancel their
  // jobs one id at a time: plain ids are read alone instead, unless one
  // heads an array (whose elements it names too).
  bool listing = filtered || ids.empty();
  for (const JobIdArg& id : ids) {
    if (listing) break;
    if (id.index) {
      listing = true;
    } else if (std::optional<json> job = FindJob(command, client, id.job)) {
      listing = (*job)["array_index"].is_number() && !(*job)["array_parent"].is_number();
    }
  }
  std::vector<SlurmJob> live;
  if (listing) {
    for (const json& job : ListJobs(command, client, "&live=true")) {
      live.push_back(SlurmJobFromJson(job, partitions.default_name));
    }
  }
  auto matches = [&](const SlurmJob& job) {
    return (options.user.empty() || job.user == options.user) &&
           (options.name.empty() || job.name == options.name) &&
           (options.states.empty() || std::find(options.states.begin(), options.states.end(),
                                                job.state) != options.states.end()) &&
           (options.partitions.empty() ||
            std::find(options.partitions.begin(), options.partitions.end(), job.partition) !=
                options.partitions.end());
  };

  // What to cancel, in order, each once; and the ids named that name nothing.
  std::vector<int64_t> targets;
  std::set<int64_t> chosen;
  auto choose = [&](int64_t id) {
    if (chosen.insert(id).second) targets.push_back(id);
  };
  int failures = 0;
  for (const JobIdArg& id : ids) {
    const std::string shown =
        std::to_string(id.job) + (id.index ? "_" + std::to_string(*id.index) : "");
    bool found = false;
    for (const SlurmJob& job : live) {
      // "12" is job 12 and, when 12 heads an array, every element of it
      // (Slurm's array job id is its first element's); "12_3" is element 3.
      const bool named = id.index ? job.array_index == id.index &&
                                        job.array_parent.value_or(job.id) == id.job &&
                                        job.array_index.has_value()
                                  : job.id == id.job || job.array_parent == id.job;
      if (!named) continue;
      found = true;
      if (matches(job)) choose(job.id);
    }
    if (!listing) {
      choose(id.job);
      continue;
    }
    if (found || id.index) {
      if (!found && options.verbose) {
        std::fprintf(stderr, "%s: error: Kill job error on job id %s: Invalid job id specified\n",
                     command.c_str(), shown.c_str());
      }
      continue;
    }
    // Not live: ended (Slurm: already completed) or unknown. Cancel it
    // anyway and let the server's answer say which.
    if (!filtered) choose(id.job);
  }
  if (ids.empty()) {
    for (const SlurmJob& job : live) {
      if (matches(job)) choose(job.id);
    }
  }

  for (int64_t id : targets) {
    // Cancelling twice does what once does: safe to resend. A signal is
    // not (a handler would run twice).
    Result<json> reply =
        options.signal.empty()
            ? client.Post("/api/v1/jobs/" + std::to_string(id) + "/cancel", json::object(),
                          follow::Replay::kSafe)
            : client.Post("/api/v1/jobs/" + std::to_string(id) + "/signal",
                          json{{"signal", options.signal}, {"batch_only", options.batch_only}},
                          follow::Replay::kUnsafe);
    if (reply.ok()) continue;
    // A job that is unknown or already ended is no failure to Slurm: it
    // says so only with -v, and exits 0 (tests/data/slurm/golden/states.txt,
    // "scancel 999999"), so scripts may cancel what may have ended.
    // A signal for a job that is not running is an error (the server says
    // why).
    const bool not_running =
        !options.signal.empty() && reply.status().code() == StatusCode::kFailedPrecondition;
    const bool gone = !not_running && (reply.status().code() == StatusCode::kNotFound ||
                                       reply.status().code() == StatusCode::kFailedPrecondition);
    if (!gone) ++failures;
    if (gone && !options.verbose) continue;
    std::string why = reply.status().message();
    switch (reply.status().code()) {
      case StatusCode::kNotFound:
        why = "Invalid job id specified";
        break;
      case StatusCode::kFailedPrecondition:
        if (!not_running) why = "Job/step already completing or completed";
        break;
      case StatusCode::kPermissionDenied:
        why = "Access/permission denied";
        break;
      case StatusCode::kUnavailable:
        Fail(command, "Unable to contact the Berth server (" + reply.status().message() + ")");
      default:
        break;
    }
    std::fprintf(stderr, "%s: error: Kill job error on job id %lld: %s\n", command.c_str(),
                 static_cast<long long>(id), why.c_str());
  }
  return failures > 0 ? kSlurmExitError : 0;
}

}  // namespace berth::cli::slurm
