// sacct: Berth's job history (GET /api/v1/jobs, ended jobs included) as
// Slurm's accounting lists it, each job's batch script and srun steps
// under it (GET /api/v1/jobs/{id}/steps) unless -X (docs/from-slurm.md).
#include <getopt.h>
#include <pwd.h>

#include <cstdio>
#include <ctime>
#include <map>
#include <set>

#include "cli/slurm/sacct_format.h"
#include "cli/slurm/slurm_client.h"
#include "cli/slurm/slurm_commands.h"
#include "cli/slurm/slurm_states.h"
#include "cli/slurm/slurm_text.h"

namespace berth::cli::slurm {
namespace {

using nlohmann::json;

constexpr char kUsage[] =
    "Usage: sacct [-j JOBS] [-u USERS | -a] [-X] [-n] [-P | -p] [-o FIELDS] [-S TIME] [-E TIME]\n"
    "             [-s STATES] [-r PARTITIONS] [--name NAMES]\n"
    "Berth's job history in Slurm's sacct form (docs/from-slurm.md).\n";

struct SacctOptions {
  std::vector<std::string> jobs;
  std::vector<std::string> users;
  bool all_users = false;
  bool allocations = false;  // -X: jobs only, no step rows
  bool no_header = false;
  SacctLayout layout = SacctLayout::kColumns;
  std::string format = kSacctDefaultFormat;
  std::string start;
  std::string end;
  std::vector<std::string> states;
  std::vector<std::string> partitions;
  std::vector<std::string> names;
};

SacctOptions ParseOptions(int argc, char** argv) {
  enum { kName = 1000, kHelp, kUsageOpt, kHelpFormat };
  static const option kLong[] = {{"jobs", required_argument, nullptr, 'j'},
                                 {"user", required_argument, nullptr, 'u'},
                                 {"uid", required_argument, nullptr, 'u'},
                                 {"allusers", no_argument, nullptr, 'a'},
                                 {"allocations", no_argument, nullptr, 'X'},
                                 {"noheader", no_argument, nullptr, 'n'},
                                 {"parsable", no_argument, nullptr, 'p'},
                                 {"parsable2", no_argument, nullptr, 'P'},
                                 {"format", required_argument, nullptr, 'o'},
                                 {"starttime", required_argument, nullptr, 'S'},
                                 {"endtime", required_argument, nullptr, 'E'},
                                 {"state", required_argument, nullptr, 's'},
                                 {"partition", required_argument, nullptr, 'r'},
                                 {"name", required_argument, nullptr, kName},
                                 {"brief", no_argument, nullptr, 'b'},
                                 {"helpformat", no_argument, nullptr, kHelpFormat},
                                 {"help", no_argument, nullptr, kHelp},
                                 {"usage", no_argument, nullptr, kUsageOpt},
                                 {nullptr, 0, nullptr, 0}};
  SacctOptions options;
  optind = 1;
  int c = 0;
  auto add = [](std::vector<std::string>& to, const char* text) {
    for (std::string& item : SplitList(text)) to.push_back(std::move(item));
  };
  while ((c = getopt_long(argc, argv, "j:u:aXnpPo:S:E:s:r:b", kLong, nullptr)) != -1) {
    switch (c) {
      case 'j':
        add(options.jobs, optarg);
        break;
      case 'u':
        add(options.users, optarg);
        break;
      case 'a':
        options.all_users = true;
        break;
      case 'X':
        options.allocations = true;
        break;
      case 'n':
        options.no_header = true;
        break;
      case 'p':
        options.layout = SacctLayout::kParsable;
        break;
      case 'P':
        options.layout = SacctLayout::kParsableNoEnd;
        break;
      case 'o':
        options.format = optarg;
        break;
      case 'b':
        options.format = "jobid,state,exitcode";
        break;
      case 'S':
        options.start = optarg;
        break;
      case 'E':
        options.end = optarg;
        break;
      case 's':
        add(options.states, optarg);
        break;
      case 'r':
        add(options.partitions, optarg);
        break;
      case kName:
        add(options.names, optarg);
        break;
      case kHelpFormat:
        std::puts(
            "Account AllocCPUS AllocTRES Elapsed ElapsedRaw End ExitCode JobID JobIDRaw JobName\n"
            "NNodes NodeList NTasks Partition Priority Reason Start State Submit Timelimit User\n"
            "WorkDir");
        std::exit(0);
      case kHelp:
      case kUsageOpt:
        std::fputs(kUsage, stdout);
        std::exit(0);
      default:
        std::fprintf(stderr, "Try \"%s --help\" for more information\n", argv[0]);
        std::exit(kSlurmExitError);
    }
  }
  if (optind < argc) Fail(argv[0], std::string("Unknown arguments: ") + argv[optind]);
  return options;
}

core::Time Now() {
  return core::Time::FromMicros(static_cast<int64_t>(std::time(nullptr)) * 1'000'000);
}

// -S/-E: "now", "today"/"midnight", or a date with an optional time.
core::Time TimeArg(const std::string& command, const std::string& flag, const std::string& text) {
  if (text == "now") return Now();
  if (text == "today" || text == "midnight") {
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    ::localtime_r(&now, &local);
    char day[16];
    std::strftime(day, sizeof(day), "%Y-%m-%d", &local);
    return ParseSlurmTime(day).value_or(Now());
  }
  std::optional<core::Time> time = ParseSlurmTime(text);
  if (!time) {
    Fail(command, flag + ": invalid time '" + text +
                      "' (Berth reads YYYY-MM-DD[THH:MM[:SS]], now, today or midnight)");
  }
  return *time;
}

std::string Uid(const std::string& user) {
  struct passwd entry {};
  struct passwd* found = nullptr;
  char buffer[4096];
  if (getpwnam_r(user.c_str(), &entry, buffer, sizeof(buffer), &found) != 0 || found == nullptr) {
    return "";
  }
  return std::to_string(found->pw_uid);
}

// "cancelled by alice[; stopping]" is the record's message: alice's uid.
std::string CancellerUid(const json& job) {
  const std::string message = job.value("message", "");
  const std::string prefix = "cancelled by ";
  if (message.rfind(prefix, 0) != 0) return "";
  const std::string user = message.substr(prefix.size(), message.find(';') - prefix.size());
  return Uid(user);
}

bool Contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// The rows under a job that started: its batch script's, then its steps'
// in order, as Slurm's accounting keeps them. `listed` is the job as the
// listing gave it, with its steps (steps=true); a job read alone has them
// read now. A job the server no longer knows (or whose steps it cannot
// show) has none.
std::vector<SacctStep> StepRows(const ApiClient& client, const SlurmJob& job, const json& listed) {
  std::vector<SacctStep> rows;
  if (!job.start_time || job.IsPending()) return rows;
  if (std::optional<SacctStep> batch = BatchStep(job)) rows.push_back(std::move(*batch));
  json steps = listed.value("steps", json());
  if (!steps.is_array()) {
    Result<json> reply = client.Get("/api/v1/jobs/" + std::to_string(job.id) + "/steps");
    if (reply.ok()) steps = reply->value("steps", json());
  }
  if (!steps.is_array()) return rows;
  for (const json& step : steps) rows.push_back(StepFromJson(job, step));
  return rows;
}

}  // namespace

int Sacct(int argc, char** argv) {
  const std::string command = argv[0];
  SacctOptions options = ParseOptions(argc, argv);
  Result<std::vector<SacctField>> fields = ParseSacctFormat(options.format);
  if (!fields.ok()) Fail(command, fields.status().message());
  std::set<std::string> states;
  for (const std::string& word : options.states) {
    Result<std::vector<std::string>> named = ParseStateFilter(word);
    if (!named.ok()) Fail(command, "Invalid job state specified: " + word);
    states.insert(named->begin(), named->end());
  }
  // Slurm's window: from midnight today unless -S or -j; to now unless -E.
  std::optional<core::Time> from;
  if (!options.start.empty()) {
    from = TimeArg(command, "--starttime", options.start);
  } else if (options.jobs.empty()) {
    from = TimeArg(command, "--starttime", "midnight");
  }
  // No -E: up to now, which every job the server has is before (a job
  // submitted this very second included: `now` here is whole seconds).
  std::optional<core::Time> to;
  if (!options.end.empty()) to = TimeArg(command, "--endtime", options.end);

  const ApiClient client = ConnectOrFail(command);
  // Slurm shows a user's own jobs unless asked for others, or an admin asks.
  if (options.users.empty() && !options.all_users) {
    const json who = GetOrFail(command, client, "/api/v1/whoami");
    if (who.value("role", "") != "admin") options.users.push_back(who.value("user", ""));
  }
  const Partitions partitions = LoadPartitions(command, client);
  std::vector<json> listed;
  // Rows under the jobs come with the listing, unless -X hides them.
  const std::string steps_query = options.allocations ? "" : "&steps=true";
  // Jobs named only by rows under them ("12.batch", "12_3.0"): those rows
  // alone, as Slurm's sacct -j prints them.
  std::map<int64_t, std::set<std::string>> only_steps;
  std::set<int64_t> whole;
  if (!options.jobs.empty()) {
    std::vector<json> every;  // the whole listing, read once if an array is named
    bool have_every = false;
    std::set<int64_t> seen;
    for (const std::string& id : options.jobs) {
      Result<SacctJobWord> word = ParseSacctJobWord(id);
      if (!word.ok()) Fail(command, word.status().message());
      std::vector<json> named;
      // An element ("12_3"), or an array by its id: from the listing.
      bool in_listing = word->job.find('_') != std::string::npos;
      if (!in_listing) {
        std::optional<json> job = FindJob(command, client, std::stoll(word->job));
        if (!job) continue;
        in_listing = job->value("array_parent", json()) == job->value("id", json());
        if (!in_listing) named.push_back(std::move(*job));
      }
      if (in_listing) {
        if (!have_every) every = ListJobs(command, client, steps_query);
        have_every = true;
        for (const json& job : every) {
          if (IsNamedBy(SlurmJobFromJson(job, partitions.default_name), word->job)) {
            named.push_back(job);
          }
        }
      }
      for (json& job : named) {
        const int64_t number = job.value("id", int64_t{0});
        if (word->step) {
          only_steps[number].insert(*word->step);
        } else {
          whole.insert(number);
        }
        if (seen.insert(number).second) listed.push_back(std::move(job));
      }
    }
  } else {
    const std::string query = options.users.size() == 1 ? "&user=" + options.users[0] : "";
    listed = ListJobs(command, client, query + steps_query);
  }

  std::vector<SlurmJob> shown;
  std::map<int64_t, std::string> canceller_uids;
  std::map<int64_t, const json*> raw_jobs;  // as listed, with their steps
  for (const json& raw : listed) {
    SlurmJob job = SlurmJobFromJson(raw, partitions.default_name);
    if (!options.users.empty() && !Contains(options.users, job.user)) continue;
    if (!options.partitions.empty() && !Contains(options.partitions, job.partition)) continue;
    if (!options.names.empty() && !Contains(options.names, job.name)) continue;
    if (!states.empty() && states.count(job.state) == 0) continue;
    // In the window: not ended before it starts, not submitted after it ends.
    if (from && job.end_time && *job.end_time < *from) continue;
    if (to && job.submit_time > *to) continue;
    canceller_uids[job.id] = CancellerUid(raw);
    raw_jobs[job.id] = &raw;
    shown.push_back(std::move(job));
  }
  const core::Time now = Now();
  std::string out = options.no_header ? "" : SacctHeader(*fields, options.layout);
  for (const SlurmJob& job : FoldPendingArrayElements(std::move(shown))) {
    const auto named_steps = only_steps.find(job.id);
    const bool steps_only = named_steps != only_steps.end() && !whole.contains(job.id);
    if (!steps_only) out += SacctLine(*fields, options.layout, job, now, canceller_uids[job.id]);
    if (options.allocations && !steps_only) continue;
    const auto raw = raw_jobs.find(job.id);
    for (const SacctStep& step :
         StepRows(client, job, raw != raw_jobs.end() ? *raw->second : json::object())) {
      if (steps_only && !named_steps->second.contains(step.suffix)) continue;
      out += SacctStepLine(*fields, options.layout, job, step, now);
    }
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace berth::cli::slurm
