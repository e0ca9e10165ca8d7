// The Slurm commands' output against what a real Slurm 22.05 printed for
// the same jobs and nodes (tests/data/slurm/golden/states.txt, recorded by
// scripts/slurm-golden.sh): headers, widths, state and reason words.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>

#include "cli/slurm/sacct_format.h"
#include "cli/slurm/scontrol_job.h"
#include "cli/slurm/sinfo_rows.h"
#include "cli/slurm/slurm_job.h"
#include "cli/slurm/slurm_states.h"
#include "cli/slurm/slurm_text.h"
#include "cli/slurm/squeue_format.h"
#include "common/time_format.h"

namespace berth::cli::slurm {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// The sections of states.txt: "== squeue" -> its lines.
std::multimap<std::string, std::vector<std::string>> Golden() {
  std::ifstream in(BERTH_SOURCE_DIR "/tests/data/slurm/golden/states.txt");
  EXPECT_TRUE(in.good());
  std::multimap<std::string, std::vector<std::string>> sections;
  std::string line;
  std::string name;
  std::vector<std::string> lines;
  while (std::getline(in, line)) {
    if (line.rfind("== ", 0) == 0) {
      if (!name.empty()) sections.emplace(name, lines);
      name = line.substr(3);
      lines.clear();
    } else {
      lines.push_back(line);
    }
  }
  if (!name.empty()) sections.emplace(name, lines);
  return sections;
}

std::vector<std::string> Section(const std::string& name) {
  auto sections = Golden();
  auto it = sections.find(name);
  EXPECT_NE(it, sections.end()) << name;
  return it == sections.end() ? std::vector<std::string>() : it->second;
}

core::Time At(int64_t seconds) { return core::Time::FromMicros(seconds * 1'000'000); }

// The golden jobs, as Berth's API shows such jobs (its job JSON), in the
// partition "gpu" of nodes sim1..sim4 with 8 GPUs each.
json PendingJob(const std::string& name, const std::string& state, const std::string& reason,
                int64_t gpus) {
  return json{{"id", 1},
              {"name", name},
              {"user", "root"},
              {"state", state},
              {"reason", reason},
              {"queue", "gpu"},
              {"tasks", 1},
              {"gpu_milli", gpus * 1000},
              {"cpu_milli", 1000},
              {"memory_mib", 0},
              {"priority", 0},
              {"placement", json::array()},
              {"submit_time", FormatRfc3339(At(1000))},
              {"start_time", nullptr},
              {"end_time", nullptr},
              {"eta", nullptr},
              {"time_limit_s", nullptr},
              {"attempts", 0},
              {"exit_code", nullptr},
              {"signal", nullptr}};
}

json RunningFill() {
  json job = PendingJob("fill", "running", "", 8);
  job["tasks"] = 4;
  job["start_time"] = FormatRfc3339(At(1000));
  job["attempts"] = 1;
  for (const char* node : {"sim1", "sim2", "sim3", "sim4"}) {
    job["placement"].push_back({{"node", node}, {"gpus", {0, 1, 2, 3, 4, 5, 6, 7}}});
  }
  return job;
}

// Golden lines print "ID" for job ids: so do these jobs.
std::vector<SlurmJob> GoldenQueue() {
  std::vector<SlurmJob> jobs;
  for (const json& job :
       {PendingJob("waits", "pending", "resources", 8),
        PendingJob("behind", "pending", "priority", 8), PendingJob("dep", "held", "dependency", 0),
        PendingJob("held", "held", "held", 0), RunningFill()}) {
    SlurmJob slurm = SlurmJobFromJson(job, "gpu");
    slurm.array_id = "ID";
    jobs.push_back(slurm);
  }
  return jobs;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

// `now`: when the recording ran the command (the running job started at 1000).
std::vector<std::string> Squeue(const ParsedFormat& parsed, bool header, int64_t now = 1005) {
  std::string out = header ? SqueueHeader(parsed.format) : "";
  for (const SlurmJob& job : GoldenQueue()) out += SqueueLine(parsed.format, job, At(now));
  return Lines(out);
}

TEST(SqueueTest, DefaultFormatMatchesSlurmsLineForLine) {
  const ParsedFormat parsed = ParseSqueueFormat(kSqueueDefaultFormat);
  EXPECT_TRUE(parsed.unknown.empty());
  EXPECT_EQ(Squeue(parsed, true), Section("squeue"));
  // The recording ran this one a second after the first (TIME 0:06).
  EXPECT_EQ(Squeue(ParseSqueueFormat("%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"), true, 1006),
            Section("squeue -o '%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R'"));
}

TEST(SqueueTest, LongFieldListAndHeaderlessFormatMatchSlurms) {
  std::vector<SlurmJob> jobs = GoldenQueue();
  const ParsedFormat wide =
      ParseSqueueLongFormat("JobID,Name,State,Reason,NumNodes,NumTasks,tres-per-node");
  EXPECT_TRUE(wide.unknown.empty());
  std::string out = SqueueHeader(wide.format);
  for (SlurmJob& job : jobs) {
    job.id = 0;  // JobID is the raw id: print "ID" as the golden file does
    std::string line = SqueueLine(wide.format, job, At(1005));
    out += "ID" + line.substr(2);
  }
  // Berth's dependency and held jobs here ask for no GPU: N/A, as Slurm's did.
  EXPECT_EQ(Lines(out),
            Section("squeue -O JobID,Name,State,Reason,NumNodes,NumTasks,tres-per-node"));
  EXPECT_EQ(Squeue(ParseSqueueFormat("%i|%T|%r"), false), Section("squeue -h -o '%i|%T|%r'"));
}

TEST(SqueueTest, MoreFieldsAndHeadersMatchSlurms) {
  std::vector<SlurmJob> jobs = GoldenQueue();
  jobs[4].time_limit_s = 365 * 86400;  // Slurm's job under an infinite partition
  // The jobs without GPUs ask no memory: the golden partition's
  // DefMemPerCPU=3072 gives them 3G, as the queue's
  // default_memory_per_cpu_mib gives Berth's (server/queue_admission.h).
  // (Slurm's MinMemory of the GPU jobs stays 0: their DefMemPerGPU memory
  // is kept per GPU. Berth's %m is the node's memory: docs/from-slurm.md.)
  jobs[2].memory_mib = 3072;
  jobs[3].memory_mib = 3072;
  const ParsedFormat fields = ParseSqueueFormat("%j|%l|%L|%C|%b|%D|%a|%q|%Y|%r|%t|%m");
  EXPECT_TRUE(fields.unknown.empty());
  std::string out;
  for (const SlurmJob& job : jobs) out += SqueueLine(fields.format, job, At(1006));
  EXPECT_EQ(Lines(out), Section("squeue -h -o '%j|%l|%L|%C|%b|%D|%a|%q|%Y|%r|%t|%m'"));
  EXPECT_EQ(Lines(SqueueHeader(ParseSqueueFormat(kSqueueStartFormat).format)),
            Section("squeue --start (header)"));
  EXPECT_EQ(
      Lines(SqueueHeader(ParseSqueueFormat("%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R").format)),
      Section("squeue -l (header)"));
}

TEST(SqueueTest, FieldsPadCutAndJustifyAsSlurmPrintsThem) {
  EXPECT_EQ(PadField("averylongname", 8, Justify::kRight, Cut::kYes), "averylon");
  EXPECT_EQ(PadField("ab", 5, Justify::kRight, Cut::kYes), "   ab");
  EXPECT_EQ(PadField("ab", 5, Justify::kLeft, Cut::kYes), "ab   ");
  EXPECT_EQ(PadField("sim[1-4],gpu[01-08]", 6, Justify::kLeft, Cut::kNo), "sim[1-4],gpu[01-08]");
  // A prefix, suffixes, an unknown letter kept as text.
  const ParsedFormat parsed = ParseSqueueFormat("id=%i;%.3t%x %j");
  EXPECT_EQ(parsed.unknown, std::vector<std::string>{"x"});
  SlurmJob job = GoldenQueue()[4];
  job.array_id = "42";
  EXPECT_EQ(SqueueLine(parsed.format, job, At(1005)), "id=42;  R%x fill\n");
  EXPECT_EQ(ParseSqueueLongFormat("Name:.6,Nope").unknown, std::vector<std::string>{"Nope"});
}

TEST(SqueueTest, TimesLimitsAndStartsInSlurmsForms) {
  EXPECT_EQ(SlurmDuration(5), "0:05");
  EXPECT_EQ(SlurmDuration(3723), "1:02:03");
  EXPECT_EQ(SlurmDuration(2 * 86400 + 3 * 3600 + 4 * 60 + 5), "2-03:04:05");
  EXPECT_EQ(SlurmDuration(-1), "INVALID");
  EXPECT_EQ(SlurmElapsed(60), "00:01:00");
  EXPECT_EQ(SlurmElapsed(365 * 86400), "365-00:00:00");
  EXPECT_EQ(SlurmMemory(262144), "256G");
  EXPECT_EQ(SlurmMemory(1536), "1.50G");
  EXPECT_EQ(SlurmMemory(1000), "1000M");
  EXPECT_EQ(SlurmMemory(0), "0");
  setenv("TZ", "UTC", 1);
  tzset();
  EXPECT_EQ(SlurmTime(At(1796000000)), "2026-11-30T00:53:20");
  EXPECT_EQ(ParseSlurmTime("2026-11-30T00:53:20"), At(1796000000));
  EXPECT_EQ(ParseSlurmTime("2026-11-30T00:53"), At(1796000000 - 20));
  EXPECT_EQ(ParseSlurmTime("2026-11-30"), At(1796000000 - 3200));
  EXPECT_FALSE(ParseSlurmTime("2026-11-30T00"));
  EXPECT_FALSE(ParseSlurmTime("yesterday"));
  // --start: a pending job's START_TIME is Berth's ETA; unknown is N/A.
  json pending = PendingJob("waits", "pending", "resources", 8);
  pending["eta"] = FormatRfc3339(At(1796000000));
  pending["time_limit_s"] = 3600.0;  // the API's durations are seconds with a fraction
  const SlurmJob job = SlurmJobFromJson(pending, "gpu");
  const ParsedFormat start = ParseSqueueFormat("%S|%e|%l|%L|%M|%V");
  EXPECT_EQ(SqueueLine(start.format, job, At(1005)),
            "2026-11-30T00:53:20|2026-11-30T01:53:20|1:00:00|1:00:00|0:00|1970-01-01T00:16:40\n");
  EXPECT_EQ(ParseSqueueFormat(kSqueueStartFormat).unknown.size(), 0u);
  const ParsedFormat headers = ParseSqueueFormat(kSqueueStartFormat);
  EXPECT_EQ(SqueueHeader(headers.format),
            "             JOBID PARTITION     NAME     USER ST          START_TIME  NODES "
            "SCHEDNODES           NODELIST(REASON)\n");
}

// Every Berth state and reason has its Slurm word; the ended ones as
// `scontrol show job` printed them in states.txt.
TEST(SlurmJobTest, StatesReasonsAndExitCodesMapToSlurms) {
  struct Case {
    std::string state, reason, message;
    std::optional<int64_t> exit_code, signal;
    std::string slurm_state, compact, slurm_reason, exit;
  };
  const std::vector<Case> cases = {
      {"pending", "resources", "", {}, {}, "PENDING", "PD", "Resources", "0:0"},
      {"pending", "fragmentation", "", {}, {}, "PENDING", "PD", "Resources", "0:0"},
      {"pending", "priority", "", {}, {}, "PENDING", "PD", "Priority", "0:0"},
      {"held", "dependency", "", {}, {}, "PENDING", "PD", "Dependency", "0:0"},
      {"held", "held", "", {}, {}, "PENDING", "PD", "JobHeldUser", "0:0"},
      {"pending", "nodes_unavailable", "", {}, {}, "PENDING", "PD", "ReqNodeNotAvail", "0:0"},
      {"pending", "array_limit", "", {}, {}, "PENDING", "PD", "JobArrayTaskLimit", "0:0"},
      {"pending",
       "user_limit",
       "user limit: 8 GPUs running of 8 allowed in queue a",
       {},
       {},
       "PENDING",
       "PD",
       "QOSMaxGRESPerUser",
       "0:0"},
      {"pending",
       "user_limit",
       "user limit: 2 jobs running of 2 allowed in queue a",
       {},
       {},
       "PENDING",
       "PD",
       "QOSMaxJobsPerUserLimit",
       "0:0"},
      {"pending", "quota", "", {}, {}, "PENDING", "PD", "QOSGrpGRES", "0:0"},
      {"pending", "infeasible", "", {}, {}, "PENDING", "PD", "BadConstraints", "0:0"},
      {"running", "", "", {}, {}, "RUNNING", "R", "None", "0:0"},
      {"starting", "", "", {}, {}, "RUNNING", "R", "None", "0:0"},
      {"completing", "cancelled", "", {}, {}, "COMPLETING", "CG", "None", "0:0"},
      // states.txt: ok, fails (exit 3), killed (kill -9 $$), cancelled, timeout.
      {"succeeded", "exited", "", 0, {}, "COMPLETED", "CD", "None", "0:0"},
      {"failed", "exited", "", 3, {}, "FAILED", "F", "NonZeroExitCode", "3:0"},
      {"failed", "exited", "", {}, 9, "FAILED", "F", "JobLaunchFailure", "0:9"},
      {"cancelled", "cancelled", "", {}, 15, "CANCELLED", "CA", "None", "0:15"},
      {"failed", "time_limit", "", {}, 15, "TIMEOUT", "TO", "TimeLimit", "0:15"},
      {"timeout", "time_limit", "", {}, 15, "TIMEOUT", "TO", "TimeLimit", "0:15"},
      {"failed", "out_of_memory", "", 137, {}, "OUT_OF_MEMORY", "OOM", "OutOfMemory", "0:125"},
      {"failed", "node_lost", "", {}, {}, "NODE_FAIL", "NF", "NodeDown", "0:0"},
      {"failed", "start_failed", "", 127, {}, "FAILED", "F", "JobLaunchFailure", "127:0"},
      {"cancelled",
       "dependency_never_satisfied",
       "",
       {},
       {},
       "CANCELLED",
       "CA",
       "DependencyNeverSatisfied",
       "0:0"},
      {"preempted", "preempted", "", {}, {}, "PREEMPTED", "PR", "None", "0:0"},
      {"lost", "node_lost", "", {}, {}, "REQUEUED", "RQ", "NodeDown", "0:0"},
  };
  for (const Case& c : cases) {
    json job = PendingJob("x", c.state, c.reason, 1);
    job["message"] = c.message;
    if (c.exit_code) job["exit_code"] = *c.exit_code;
    if (c.signal) job["signal"] = *c.signal;
    const SlurmJob slurm = SlurmJobFromJson(job, "gpu");
    EXPECT_EQ(slurm.state, c.slurm_state) << c.state << "/" << c.reason;
    EXPECT_EQ(slurm.state_compact, c.compact) << c.state << "/" << c.reason;
    EXPECT_EQ(slurm.reason, c.slurm_reason) << c.state << "/" << c.reason;
    EXPECT_EQ(slurm.exit_code, c.exit) << c.state << "/" << c.reason;
  }
}

TEST(SlurmJobTest, ScontrolShowsTheGoldenKeysForEndedJobs) {
  // Each "scontrol show job -o" section of states.txt lists the keys and
  // values Slurm gave; Berth's line for the same job carries each of them.
  struct Ended {
    std::string name, state, reason;
    std::optional<int64_t> exit_code, signal, limit;
  };
  const std::vector<Ended> jobs = {{"ok", "succeeded", "exited", 0, {}, {}},
                                   {"fails", "failed", "exited", 3, {}, {}},
                                   {"killed", "failed", "exited", {}, 9, {}},
                                   {"cancelled", "cancelled", "cancelled", {}, 15, {}},
                                   {"timeout", "failed", "time_limit", {}, 15, 60}};
  auto sections = Golden();
  auto [begin, end] = sections.equal_range("scontrol show job -o (ID)");
  ASSERT_EQ(std::distance(begin, end), 5);
  size_t i = 0;
  for (auto it = begin; it != end; ++it, ++i) {
    json job = PendingJob(jobs[i].name, jobs[i].state, jobs[i].reason, 1);
    job["start_time"] = FormatRfc3339(At(1000));
    job["end_time"] = FormatRfc3339(At(1003));
    if (jobs[i].exit_code) job["exit_code"] = *jobs[i].exit_code;
    if (jobs[i].signal) job["signal"] = *jobs[i].signal;
    if (jobs[i].limit) job["time_limit_s"] = *jobs[i].limit;
    // Slurm's backfill gives a job it starts under an infinite partition a
    // limit of 365 days, its main scheduler none: which started each varies
    // from one recording to the next.
    if (std::find(it->second.begin(), it->second.end(), "TimeLimit=365-00:00:00") !=
        it->second.end()) {
      job["time_limit_s"] = 365 * 86400;
    }
    job["attempts"] = 1;
    const std::string line =
        " " + ScontrolJob(SlurmJobFromJson(job, "gpu"), At(1010), "0", Lines::kOne);
    EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line";
    for (const std::string& key_value : it->second) {
      EXPECT_NE(line.find(" " + key_value + " "), std::string::npos)
          << jobs[i].name << ": " << key_value << " not in" << line;
    }
  }
}

// sacct's columns as Slurm's print_fields writes them (src/sacct/sacct.c
// widths): JobID left in 12, the rest right, a '+' on a cut value, a dashed
// line under the header; -p and -P with '|'.
TEST(SacctTest, ColumnsAndParsableFormsAsSlurms) {
  setenv("TZ", "UTC", 1);
  tzset();
  Result<std::vector<SacctField>> fields = ParseSacctFormat(kSacctDefaultFormat);
  ASSERT_TRUE(fields.ok());
  EXPECT_EQ(SacctHeader(*fields, SacctLayout::kColumns),
            "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n"
            "------------ ---------- ---------- ---------- ---------- ---------- -------- \n");
  json failed = PendingJob("averyveryverylongname", "failed", "exited", 4);
  failed["id"] = 42;
  failed["exit_code"] = 3;
  failed["start_time"] = FormatRfc3339(At(1796000000));
  failed["end_time"] = FormatRfc3339(At(1796000000 + 3723));
  failed["placement"] = json::array({{{"node", "sim2"}, {"gpus", {0, 1, 2, 3}}}});
  const SlurmJob job = SlurmJobFromJson(failed, "gpu");
  EXPECT_EQ(SacctLine(*fields, SacctLayout::kColumns, job, At(1796009999), ""),
            "42           averyvery+        gpu        gpu          1     FAILED      3:0 \n");
  Result<std::vector<SacctField>> chosen =
      ParseSacctFormat("JobID,State,Elapsed,Start,End,AllocTRES,NodeList,jobname%4");
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ(SacctHeader(*chosen, SacctLayout::kParsableNoEnd),
            "JobID|State|Elapsed|Start|End|AllocTRES|NodeList|JobName\n");
  EXPECT_EQ(SacctLine(*chosen, SacctLayout::kParsableNoEnd, job, At(1796009999), ""),
            "42|FAILED|01:02:03|2026-11-30T00:53:20|2026-11-30T01:55:23|"
            "billing=1,cpu=1,gres/gpu=4,node=1|sim2|averyveryverylongname\n");
  EXPECT_EQ(SacctHeader(*chosen, SacctLayout::kParsable).back(), '\n');
  EXPECT_EQ(SacctLine(*chosen, SacctLayout::kColumns, job, At(1796009999), "").substr(0, 13),
            "42           ");
  json cancelled = PendingJob("c", "cancelled", "cancelled", 0);
  EXPECT_EQ(
      SacctLine(*ParseSacctFormat("state,start,nodelist,alloccpus"), SacctLayout::kParsableNoEnd,
                SlurmJobFromJson(cancelled, "gpu"), At(1796009999), "1001"),
      "CANCELLED by 1001|Unknown|None assigned|1\n");
  EXPECT_FALSE(ParseSacctFormat("JobID,Bogus").ok());
}

TEST(SlurmJobTest, TasksOfTheirOwnSharesCountEachTasksOwn) {
  // -N 2 --gpus=6: 5 + 1 GPUs, 122880 + 24576 MiB (golden gpus_job_two_nodes).
  json job = PendingJob("packed", "running", "", 5);
  job["tasks"] = 2;
  job["memory_mib"] = 122880;
  job["start_time"] = FormatRfc3339(At(1000));
  job["task_shapes"] = json::parse(R"([{"gpus": 5, "cpu_milli": 0, "memory_mib": 122880},
                                       {"gpus": 1, "cpu_milli": 0, "memory_mib": 24576}])");
  job["placement"] = json::parse(R"([{"node": "sim1", "gpus": [0, 1, 2, 3, 4]},
                                     {"node": "sim2", "gpus": [0]}])");
  const SlurmJob slurm = SlurmJobFromJson(job, "gpu");
  EXPECT_EQ(slurm.total_gpus, 6);
  EXPECT_EQ(slurm.cpus, 2);
  EXPECT_EQ(slurm.total_memory_mib, 147456);
  const std::string shown = ScontrolJob(slurm, At(1005), "0", Lines::kOne);
  EXPECT_THAT(shown, HasSubstr("NumCPUs=2 "));
  EXPECT_THAT(shown, HasSubstr("TRES=cpu=2,mem=144G,node=2,billing=2"));
  EXPECT_THAT(shown, HasSubstr("gres/gpu=6"));
  const std::string row =
      SacctLine(*ParseSacctFormat("AllocTRES"), SacctLayout::kParsableNoEnd, slurm, At(1005), "");
  EXPECT_EQ(row, "billing=2,cpu=2,gres/gpu=6,mem=144G,node=2\n");
}

TEST(SlurmFormatTest, SacctJobWordsNameAJobOrElementAndARowUnderIt) {
  auto word = [](const std::string& text) {
    Result<SacctJobWord> parsed = ParseSacctJobWord(text);
    EXPECT_TRUE(parsed.ok()) << text;
    return parsed.ok() ? parsed->job + "|" + parsed->step.value_or("(none)") : "";
  };
  EXPECT_EQ(word("12"), "12|(none)");
  EXPECT_EQ(word("12_3"), "12_3|(none)");
  EXPECT_EQ(word("12.batch"), "12|batch");
  EXPECT_EQ(word("12_3.batch"), "12_3|batch");
  EXPECT_EQ(word("12_3.0"), "12_3|0");
  for (const char* bad : {"", "x", "12_", "_3", "12.", "12.bogus", "12_3_4", "0", "12.1.2"}) {
    Result<SacctJobWord> parsed = ParseSacctJobWord(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().message(), std::string("Invalid job id: ") + bad);
  }
}

TEST(SlurmStatesTest, FiltersTakeNamesCodesAndAll) {
  EXPECT_EQ(*ParseStateFilter("pd"), std::vector<std::string>{"PENDING"});
  EXPECT_EQ(*ParseStateFilter("Running"), std::vector<std::string>{"RUNNING"});
  EXPECT_EQ(*ParseStateFilter("TO"), std::vector<std::string>{"TIMEOUT"});
  EXPECT_EQ(ParseStateFilter("all")->size(), 24u);
  EXPECT_FALSE(ParseStateFilter("sleeping").ok());
  // What squeue -t bogus printed (states.txt).
  const std::vector<std::string> bogus = Section("squeue -t bogus");
  ASSERT_GE(bogus.size(), 2u);
  EXPECT_EQ(bogus[1], "squeue: error: Valid job states include: " + ValidStateList());
}

TEST(HostlistTest, CompressesAsSlurmDoes) {
  EXPECT_EQ(CompressHostlist({"sim1", "sim2", "sim3", "sim4"}), "sim[1-4]");
  EXPECT_EQ(CompressHostlist({"sim3", "sim1", "sim2"}), "sim[1-3]");
  EXPECT_EQ(CompressHostlist({"sim1"}), "sim1");
  EXPECT_EQ(CompressHostlist({"gpu07", "gpu01", "gpu02", "login", "gpu03"}), "gpu[01-03,07],login");
  EXPECT_EQ(CompressHostlist({"sim1", "sim2", "sim4"}), "sim[1-2,4]");
  EXPECT_EQ(CompressHostlist({"a1", "b2"}), "a1,b2");
  EXPECT_EQ(CompressHostlist({}), "");
}

json Node(const std::string& name, int busy) {
  json gpus = json::array();
  for (int i = 0; i < 8; ++i) {
    gpus.push_back({{"index", i}, {"healthy", true}, {"job", i < busy ? json(7) : json(nullptr)}});
  }
  return json{
      {"name", name}, {"state", "up"},      {"drained", false},     {"gpu_type", ""},
      {"gpus", gpus}, {"cpu_milli", 32000}, {"memory_mib", 262144}, {"features", json::array()}};
}

TEST(SinfoTest, DefaultAndNodeFormatsMatchSlurms) {
  const std::vector<SinfoPartition> partitions = {{"gpu", true, std::nullopt}};
  const std::vector<json> nodes = {Node("sim1", 4), Node("sim2", 4), Node("sim3", 4),
                                   Node("sim4", 4)};
  ParsedFormat parsed = ParseSinfoFormat(kSinfoDefaultFormat);
  std::vector<SinfoRow> rows =
      SinfoRows(partitions, nodes, SinfoGrouping::kByPartition, parsed.format);
  FitDefaultWidths(parsed.format, rows, false);
  std::string out = SinfoHeader(parsed.format);
  for (const SinfoRow& row : rows) out += SinfoLine(parsed.format, row);
  EXPECT_EQ(Lines(out), Section("sinfo"));

  const ParsedFormat by_node = ParseSinfoFormat("%N %P %T %c %G");
  out.clear();
  for (const SinfoRow& row : SinfoRows(partitions, nodes, SinfoGrouping::kByNode, by_node.format)) {
    out += SinfoLine(by_node.format, row);
  }
  EXPECT_EQ(Lines(out), Section("sinfo -N -h -o '%N %P %T %c %G'"));
}

TEST(SinfoTest, EveryFieldAndTheNodeHeaderMatchSlurms) {
  const std::vector<SinfoPartition> partitions = {{"gpu", true, std::nullopt}};
  const std::vector<json> nodes = {Node("sim1", 4), Node("sim2", 4), Node("sim3", 4),
                                   Node("sim4", 4)};
  const ParsedFormat all = ParseSinfoFormat("%P %a %l %D %T %t %N %c %G %m");
  EXPECT_TRUE(all.unknown.empty());
  std::string out = SinfoHeader(all.format);
  for (const SinfoRow& row :
       SinfoRows(partitions, nodes, SinfoGrouping::kByPartition, all.format)) {
    out += SinfoLine(all.format, row);
  }
  EXPECT_EQ(Lines(out), Section("sinfo -o '%P %a %l %D %T %t %N %c %G %m'"));
  ParsedFormat by_node = ParseSinfoFormat(kSinfoNodeFormat);
  const std::vector<SinfoRow> rows =
      SinfoRows(partitions, nodes, SinfoGrouping::kByNode, by_node.format);
  FitDefaultWidths(by_node.format, rows, true);
  EXPECT_EQ(Lines(SinfoHeader(by_node.format)), Section("sinfo -N (header)"));
}

TEST(SinfoTest, NodeStatesInSlurmsWords) {
  EXPECT_EQ(MapNodeState(Node("n", 0)).name, "idle");
  EXPECT_EQ(MapNodeState(Node("n", 3)).compact, "mix");
  EXPECT_EQ(MapNodeState(Node("n", 8)).name, "allocated");
  json draining = Node("n", 2);
  draining["state"] = "draining";
  EXPECT_EQ(MapNodeState(draining).compact, "drng");
  json drained = Node("n", 0);
  drained["state"] = "draining";
  EXPECT_EQ(MapNodeState(drained).compact, "drain");
  json down = Node("n", 0);
  down["state"] = "down";
  EXPECT_EQ(MapNodeState(down).name, "down");
}

}  // namespace
}  // namespace berth::cli::slurm
