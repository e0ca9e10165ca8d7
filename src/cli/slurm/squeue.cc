// squeue: Berth's jobs as Slurm lists them (docs/from-slurm.md).
#include <getopt.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <set>

#include "cli/slurm/slurm_client.h"
#include "cli/slurm/slurm_commands.h"
#include "cli/slurm/slurm_states.h"
#include "cli/slurm/squeue_format.h"

namespace berth::cli::slurm {
namespace {

using nlohmann::json;

constexpr char kLongFormat[] = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R";

struct SqueueOptions {
  std::vector<std::string> users;
  bool me = false;
  std::vector<std::string> jobs;
  std::vector<std::string> states;
  std::vector<std::string> partitions;
  std::vector<std::string> names;
  bool no_header = false;
  bool start = false;
  bool long_form = false;
  bool array_elements = false;  // -r: an array's waiting elements one per row
  std::string format;
  std::string long_format;
};

constexpr char kUsage[] =
    "Usage: squeue [-j JOBS] [-u USERS] [--me] [-t STATES] [-p PARTITIONS] [-n NAMES]\n"
    "              [-h] [-l] [--start] [-o FORMAT | -O FIELDS]\n"
    "Berth's jobs in Slurm's squeue form (docs/from-slurm.md).\n";

SqueueOptions ParseOptions(int argc, char** argv) {
  enum { kMe = 1000, kStart, kHelp, kUsageOpt };
  static const option kLong[] = {{"user", required_argument, nullptr, 'u'},
                                 {"users", required_argument, nullptr, 'u'},
                                 {"me", no_argument, nullptr, kMe},
                                 {"jobs", required_argument, nullptr, 'j'},
                                 {"states", required_argument, nullptr, 't'},
                                 {"partition", required_argument, nullptr, 'p'},
                                 {"partitions", required_argument, nullptr, 'p'},
                                 {"name", required_argument, nullptr, 'n'},
                                 {"noheader", no_argument, nullptr, 'h'},
                                 {"format", required_argument, nullptr, 'o'},
                                 {"Format", required_argument, nullptr, 'O'},
                                 {"start", no_argument, nullptr, kStart},
                                 {"long", no_argument, nullptr, 'l'},
                                 {"all", no_argument, nullptr, 'a'},
                                 {"array", no_argument, nullptr, 'r'},
                                 {"help", no_argument, nullptr, kHelp},
                                 {"usage", no_argument, nullptr, kUsageOpt},
                                 {nullptr, 0, nullptr, 0}};
  SqueueOptions options;
  optind = 1;
  int c = 0;
  while ((c = getopt_long(argc, argv, "u:j:t:p:n:ho:O:lar", kLong, nullptr)) != -1) {
    switch (c) {
      case 'u':
        for (std::string& user : SplitList(optarg)) options.users.push_back(std::move(user));
        break;
      case kMe:
        options.me = true;
        break;
      case 'j':
        for (std::string& job : SplitList(optarg)) options.jobs.push_back(std::move(job));
        break;
      case 't':
        for (std::string& state : SplitList(optarg)) options.states.push_back(std::move(state));
        break;
      case 'p':
        for (std::string& part : SplitList(optarg)) options.partitions.push_back(std::move(part));
        break;
      case 'n':
        for (std::string& name : SplitList(optarg)) options.names.push_back(std::move(name));
        break;
      case 'h':
        options.no_header = true;
        break;
      case 'o':
        if (!options.long_format.empty())
          Fail(argv[0], "-o (--format) is incompatible with -O (--Format)");
        options.format = optarg;
        break;
      case 'O':
        if (!options.format.empty())
          Fail(argv[0], "-O (--Format) is incompatible with -o (--format)");
        options.long_format = optarg;
        break;
      case kStart:
        options.start = true;
        break;
      case 'l':
        options.long_form = true;
        break;
      case 'a':
        break;  // every partition: what Berth lists anyway
      case 'r':
        options.array_elements = true;
        break;
      case kHelp:
      case kUsageOpt:
        std::fputs(kUsage, stdout);
        std::exit(0);
      default:
        std::fprintf(stderr, "Try \"%s --help\" for more information\n", argv[0]);
        std::exit(kSlurmExitError);
    }
  }
  if (optind < argc) Fail(argv[0], std::string("Unrecognized option: ") + argv[optind]);
  return options;
}

// Jobs named by -j: ids ("12") read one by one, array elements ("12_3")
// matched in the listing of every job.
std::vector<SlurmJob> NamedJobs(const std::string& command, const ApiClient& client,
                                const std::vector<std::string>& ids,
                                const std::string& default_partition) {
  std::vector<SlurmJob> jobs;
  std::set<int64_t> seen;
  std::vector<json> every;
  bool listed = false;
  for (const std::string& id : ids) {
    const size_t underscore = id.find('_');
    char* end = nullptr;
    const long long number = std::strtoll(id.c_str(), &end, 10);
    if (id.empty() || number <= 0 || (*end != '\0' && *end != '_')) {
      Fail(command, "Invalid job id: " + id);
    }
    if (underscore == std::string::npos) {
      if (seen.count(number) > 0) continue;
      if (std::optional<json> job = FindJob(command, client, number)) {
        seen.insert(number);
        jobs.push_back(SlurmJobFromJson(*job, default_partition));
      }
      continue;
    }
    if (!listed) every = ListJobs(command, client, "");
    listed = true;
    for (const json& job : every) {
      SlurmJob slurm = SlurmJobFromJson(job, default_partition);
      if (slurm.array_id == id && seen.insert(slurm.id).second) jobs.push_back(std::move(slurm));
    }
  }
  return jobs;
}

bool Contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// Slurm's default order ("P,t,-p"): by partition, pending before running
// before ended, higher priority first; then by id.
void SortJobs(std::vector<SlurmJob>& jobs, bool by_start) {
  std::stable_sort(jobs.begin(), jobs.end(), [by_start](const SlurmJob& a, const SlurmJob& b) {
    if (by_start) {
      const int64_t sa = a.eta ? a.eta->micros() : INT64_MAX;
      const int64_t sb = b.eta ? b.eta->micros() : INT64_MAX;
      if (sa != sb) return sa < sb;
      return a.id < b.id;
    }
    if (a.partition != b.partition) return a.partition < b.partition;
    if (StateOrder(a.state) != StateOrder(b.state))
      return StateOrder(a.state) < StateOrder(b.state);
    if (a.priority != b.priority) return a.priority > b.priority;
    return a.id < b.id;
  });
}

}  // namespace

int Squeue(int argc, char** argv) {
  const std::string command = argv[0];
  SqueueOptions options = ParseOptions(argc, argv);
  std::set<std::string> states;
  for (const std::string& word : options.states) {
    Result<std::vector<std::string>> named = ParseStateFilter(word);
    if (!named.ok()) {
      // Slurm's two lines, and the blank one its second message ends with.
      Fail(command, "Invalid job state specified: " + word + "\n" + command +
                        ": error: Valid job states include: " + ValidStateList() + "\n");
    }
    states.insert(named->begin(), named->end());
  }
  if (options.start && options.states.empty()) states.insert("PENDING");

  std::string format = options.format;
  if (format.empty() && options.long_format.empty()) {
    format = options.start       ? kSqueueStartFormat
             : options.long_form ? kLongFormat
                                 : kSqueueDefaultFormat;
  }
  ParsedFormat parsed = options.long_format.empty() ? ParseSqueueFormat(format)
                                                    : ParseSqueueLongFormat(options.long_format);
  for (const std::string& unknown : parsed.unknown) {
    std::fprintf(stderr, "%s: error: Invalid job format specification: %s\n", command.c_str(),
                 unknown.c_str());
  }

  const ApiClient client = ConnectOrFail(command);
  if (options.me) options.users.push_back(WhoAmI(command, client));
  const Partitions partitions = LoadPartitions(command, client);
  std::vector<SlurmJob> jobs;
  if (!options.jobs.empty()) {
    jobs = NamedJobs(command, client, options.jobs, partitions.default_name);
    if (jobs.empty() && options.jobs.size() == 1) {
      std::fputs("slurm_load_jobs error: Invalid job id specified\n", stderr);
      return kSlurmExitError;
    }
  } else {
    // Ended jobs only when a state asks for them; Berth keeps them all,
    // where Slurm forgets them after MinJobAge.
    const bool ended = std::any_of(states.begin(), states.end(), [](const std::string& s) {
      return s != "PENDING" && s != "RUNNING" && s != "COMPLETING" && s != "REQUEUED" &&
             s != "PREEMPTED";
    });
    std::string query = ended ? "" : "&live=true";
    if (options.users.size() == 1) query += "&user=" + options.users[0];
    if (options.partitions.size() == 1 && options.partitions[0] != partitions.default_name) {
      query += "&queue=" + options.partitions[0];
    }
    for (const json& job : ListJobs(command, client, query)) {
      jobs.push_back(SlurmJobFromJson(job, partitions.default_name));
    }
  }
  std::erase_if(jobs, [&](const SlurmJob& job) {
    return (!options.users.empty() && !Contains(options.users, job.user)) ||
           (!options.partitions.empty() && !Contains(options.partitions, job.partition)) ||
           (!options.names.empty() && !Contains(options.names, job.name)) ||
           (!states.empty() && states.count(job.state) == 0);
  });
  SortJobs(jobs, options.start);
  if (!options.array_elements) jobs = FoldPendingArrayElements(std::move(jobs));

  const core::Time now =
      core::Time::FromMicros(static_cast<int64_t>(std::time(nullptr)) * 1'000'000);
  std::string out;
  if (options.long_form && !options.no_header) {
    const std::time_t seconds = std::time(nullptr);
    std::tm local{};
    ::localtime_r(&seconds, &local);
    char line[64];
    std::strftime(line, sizeof(line), "%a %b %d %H:%M:%S %Y\n", &local);
    out += line;
  }
  if (!options.no_header) out += SqueueHeader(parsed.format);
  for (const SlurmJob& job : jobs) out += SqueueLine(parsed.format, job, now);
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace berth::cli::slurm
