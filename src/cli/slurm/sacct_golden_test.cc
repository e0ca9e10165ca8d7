// sacct's output against what a real Slurm 22.05's sacct printed for the
// same jobs (tests/data/slurm/golden/sacct.txt, recorded by
// `SLURM_GOLDEN_SACCT=1 scripts/slurm-golden.sh`): Berth's jobs made as the
// golden ones were, printed in each recorded form and normalized as the
// script normalized Slurm's, must give the same lines, step rows (ID.batch,
// ID.0) included. Where the fields do not mean the same, the golden lines
// are read as Berth means them: the account "research" the script made is
// Berth's account of a job, its queue ("gpu").
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "cli/slurm/sacct_format.h"
#include "cli/slurm/scontrol_job.h"
#include "cli/slurm/slurm_job.h"
#include "cli/slurm/squeue_format.h"
#include "common/time_format.h"

namespace berth::cli::slurm {
namespace {

using nlohmann::json;

struct GoldenSection {
  std::string command;  // the "== " line, without it
  std::vector<std::string> lines;
};

std::vector<GoldenSection> GoldenSections() {
  std::ifstream in(BERTH_SOURCE_DIR "/tests/data/slurm/golden/sacct.txt");
  EXPECT_TRUE(in.good());
  std::vector<GoldenSection> sections;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("== ", 0) == 0) {
      sections.push_back({line.substr(3), {}});
    } else if (!sections.empty()) {
      sections.back().lines.push_back(line);
    }
  }
  return sections;
}

core::Time AtEpoch(int64_t seconds) { return core::Time::FromSeconds(seconds); }

// A job of the golden cluster (nodes sim1..sim4, partition gpu) as Berth's
// API shows one. Ids from 70, as the script's FirstJobId. Nodes are where
// Slurm put each job in the recording (another recording may differ).
json Job(int64_t id, const std::string& name, const std::string& state, int64_t tasks = 1) {
  return json{{"id", id},
              {"name", name},
              {"user", "root"},
              {"state", state},
              {"reason", state == "pending" ? "resources" : ""},
              {"queue", "gpu"},
              {"tasks", tasks},
              {"gpu_milli", 0},
              {"cpu_milli", 1000},
              // Slurm gave a job that asked for no memory its node's.
              {"memory_mib", 262144},
              {"placement", json::array()},
              {"submit_time", FormatRfc3339(AtEpoch(1796000000))},
              {"start_time", nullptr},
              {"end_time", nullptr},
              {"exit_code", nullptr},
              {"signal", nullptr},
              {"batch", true}};  // each an sbatch job
}

// A step as GET /api/v1/jobs/{id}/steps shows it, its tasks' exit codes
// given, run from 11 s to 12 s.
json Step(int64_t id, std::vector<std::string> command, const std::vector<std::string>& nodes,
          const std::vector<int64_t>& exit_codes) {
  json tasks = json::array();
  for (size_t rank = 0; rank < exit_codes.size(); ++rank) {
    tasks.push_back({{"rank", rank},
                     {"node", nodes[rank * nodes.size() / exit_codes.size()]},
                     {"exit_code", exit_codes[rank]},
                     {"signal", nullptr}});
  }
  return json{{"step", id},
              {"state", std::any_of(exit_codes.begin(), exit_codes.end(),
                                    [](int64_t code) { return code != 0; })
                            ? "failed"
                            : "completed"},
              {"command", std::move(command)},
              {"nodes", nodes},
              {"start_time", FormatRfc3339(AtEpoch(1796000011))},
              {"end_time", FormatRfc3339(AtEpoch(1796000012))},
              {"tasks", tasks}};
}

// The srun steps the script's jobs ran: fill `srun true` on its 4 nodes,
// steps `srun true` and `srun sh -c "exit 2"` (-N 2 -n 2), gpus `srun
// true` (-n 2 on one node).
std::map<int64_t, std::vector<json>> StepsOf() {
  const std::vector<std::string> sim12 = {"sim1", "sim2"};
  return {{70, {Step(0, {"true"}, {"sim1", "sim2", "sim3", "sim4"}, {0, 0, 0, 0})}},
          {82, {Step(0, {"true"}, sim12, {0, 0}), Step(1, {"sh", "-c", "exit 2"}, sim12, {2, 2})}},
          {83, {Step(0, {"/usr/bin/true"}, {"sim1"}, {0, 0})}}};
}

json Ran(json job, const std::vector<std::string>& nodes, int64_t gpus_per_task = 0) {
  job["start_time"] = FormatRfc3339(AtEpoch(1796000010));
  if (job["state"] != "running") job["end_time"] = FormatRfc3339(AtEpoch(1796000013));
  for (const std::string& node : nodes) {
    json gpus = json::array();
    for (int64_t i = 0; i < gpus_per_task; ++i) gpus.push_back(i);
    job["placement"].push_back({{"node", node}, {"gpus", gpus}});
  }
  job["gpu_milli"] = gpus_per_task * 1000;
  return job;
}

json ArrayElement(json job, int64_t index) {
  job["array_parent"] = 73;
  job["array_index"] = index;
  job["array_max_running"] = 2;
  return job;
}

json Cancelled(json job) {
  job["state"] = "cancelled";
  job["message"] = "cancelled by root";
  if (job["end_time"].is_null()) job["end_time"] = FormatRfc3339(AtEpoch(1796000020));
  return job;
}

// While the cluster was full: a 4-node job running, one waiting for
// resources, one held, an array 0-3%2 waiting.
std::vector<json> LiveJobs() {
  json fill = Ran(Job(70, "fill", "running", 4), {"sim1", "sim2", "sim3", "sim4"}, 8);
  json waits = Job(71, "waits", "pending");
  waits["gpu_milli"] = 8000;
  json held = Job(72, "held", "held");
  held["reason"] = "held";
  std::vector<json> jobs = {fill, waits, held};
  for (int64_t i = 0; i < 4; ++i) jobs.push_back(ArrayElement(Job(73 + i, "array", "pending"), i));
  return jobs;
}

// The same and the others, ended.
std::vector<json> EndedJobs() {
  json fill = Ran(Job(70, "fill", "succeeded", 4), {"sim1", "sim2", "sim3", "sim4"}, 8);
  std::vector<json> jobs = {fill, Cancelled(Job(71, "waits", "pending")),
                            Cancelled(Job(72, "held", "held"))};
  const char* array_nodes[] = {"sim1", "sim2", "sim1", "sim2"};
  for (int64_t i = 0; i < 4; ++i) {
    jobs.push_back(ArrayElement(Ran(Job(73 + i, "array", "succeeded"), {array_nodes[i]}), i));
  }
  jobs.push_back(Ran(Job(77, "ok", "succeeded"), {"sim3"}));
  json fails = Ran(Job(78, "fails", "failed"), {"sim4"});
  fails["reason"] = "exited";
  fails["exit_code"] = 3;
  jobs.push_back(fails);
  json killed = Ran(Job(79, "killed", "failed"), {"sim3"});
  killed["signal"] = 9;
  jobs.push_back(killed);
  json cancelled = Cancelled(Ran(Job(80, "cancelled", "running"), {"sim4"}));
  cancelled["end_time"] = FormatRfc3339(AtEpoch(1796000013));
  cancelled["signal"] = 15;
  jobs.push_back(cancelled);
  json timeout = Ran(Job(81, "timeout", "timeout"), {"sim3"});
  timeout["reason"] = "time_limit";
  timeout["signal"] = 15;
  jobs.push_back(timeout);
  jobs.push_back(Ran(Job(82, "steps", "succeeded", 2), {"sim1", "sim2"}));
  json gpus = Ran(Job(83, "gpus", "succeeded", 2), {"sim1", "sim1"}, 1);
  gpus["memory_mib"] = 4096;  // --mem=8G on one node, for two tasks
  jobs.push_back(gpus);
  return jobs;
}

// What the script did to Slurm's output: ids to "ID", times and durations
// to placeholders of their width, no trailing blanks.
std::string Normalize(std::string line) {
  static const std::regex kIds(R"(\b(7[0-9]|8[0-9]|9[0-9])(\b|_))");
  static const std::regex kDates(R"([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2})");
  static const std::regex kDurations(R"(\b[0-9]{2}:[0-9]{2}:[0-9]{2}\b)");
  line = std::regex_replace(line, kIds, "ID$2");
  line = std::regex_replace(line, kDates, "YYYY-MM-DDThh:mm:ss");
  line = std::regex_replace(line, kDurations, "hh:mm:ss");
  return line.substr(0, line.find_last_not_of(' ') + 1);
}

// Berth's lines for the sacct command a golden section names.
std::vector<std::string> BerthLines(const std::string& command) {
  std::istringstream words(command);
  std::string word;
  std::string format = kSacctDefaultFormat;
  SacctLayout layout = SacctLayout::kColumns;
  bool header = true;
  bool allocations = false;
  words >> word;  // sacct
  while (words >> word && word[0] == '-') {
    if (word == "-X") allocations = true;
    if (word == "-o") words >> format;
    if (word == "-b") format = "jobid,state,exitcode";
    if (word == "-P") layout = SacctLayout::kParsableNoEnd;
    if (word == "-p") layout = SacctLayout::kParsable;
    if (word == "-n") header = false;
  }
  Result<std::vector<SacctField>> fields = ParseSacctFormat(format);
  EXPECT_TRUE(fields.ok()) << format;
  if (!fields.ok()) return {};
  // The script named the jobs it had submitted (-j), the array by its id:
  // Slurm listed the array's elements for it.
  std::vector<SlurmJob> jobs;
  const bool ended = command.find("all ended") != std::string::npos;
  const std::vector<std::string> named =
      ended ? std::vector<std::string>{"70", "71", "72", "73", "77", "78",
                                       "79", "80", "81", "82", "83"}
            : std::vector<std::string>{"70", "71", "72", "73"};
  for (const json& raw : ended ? EndedJobs() : LiveJobs()) {
    SlurmJob job = SlurmJobFromJson(raw, "gpu");
    for (const std::string& id : named) {
      if (IsNamedBy(job, id)) {
        jobs.push_back(job);
        break;
      }
    }
  }
  std::string out = header ? SacctHeader(*fields, layout) : "";
  const std::map<int64_t, std::vector<json>> steps = StepsOf();
  for (const SlurmJob& job : FoldPendingArrayElements(jobs)) {
    out +=
        SacctLine(*fields, layout, job, AtEpoch(1796000015), job.state == "CANCELLED" ? "0" : "");
    if (allocations) continue;
    // As sacct.cc lists them: the batch script's row, then the steps'.
    if (std::optional<SacctStep> batch = BatchStep(job)) {
      out += SacctStepLine(*fields, layout, job, *batch, AtEpoch(1796000015));
    }
    if (const auto it = steps.find(job.id); it != steps.end()) {
      for (const json& step : it->second) {
        out += SacctStepLine(*fields, layout, job, StepFromJson(job, step), AtEpoch(1796000015));
      }
    }
  }
  std::vector<std::string> lines;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) lines.push_back(Normalize(line));
  return lines;
}

// A golden line as Berth means its fields: the account is the queue.
std::string AsBerthMeansIt(std::string line, bool parsable) {
  const std::string account = parsable ? "gpu" : "     gpu";  // as wide as "research"
  for (size_t at = line.find("research"); at != std::string::npos; at = line.find("research")) {
    line.replace(at, 8, account);
  }
  return line;
}

TEST(SacctGoldenTest, AJobIdNamesItsArraysElementsAndAnElementItself) {
  json element = ArrayElement(Job(75, "array", "succeeded"), 2);
  const SlurmJob job = SlurmJobFromJson(element, "gpu");
  EXPECT_TRUE(IsNamedBy(job, "75"));
  EXPECT_TRUE(IsNamedBy(job, "73"));
  EXPECT_TRUE(IsNamedBy(job, "73_2"));
  EXPECT_FALSE(IsNamedBy(job, "73_1"));
  EXPECT_FALSE(IsNamedBy(job, "74"));
  const SlurmJob plain = SlurmJobFromJson(Job(77, "ok", "succeeded"), "gpu");
  EXPECT_TRUE(IsNamedBy(plain, "77"));
  EXPECT_FALSE(IsNamedBy(plain, "77_0"));
}

TEST(SacctGoldenTest, StepRowsSayHowEachStepEndedAndOnlyBatchJobsHaveABatchRow) {
  const SlurmJob job =
      SlurmJobFromJson(Ran(Job(90, "j", "running", 2), {"sim1", "sim2"}, 4), "gpu");
  json killed = Step(3, {"./a.out"}, {"sim1", "sim2"}, {0, 0});
  killed["state"] = "failed";
  killed["tasks"][1]["exit_code"] = nullptr;
  killed["tasks"][1]["signal"] = 9;
  const SacctStep step = StepFromJson(job, killed);
  EXPECT_EQ(step.suffix, "3");
  EXPECT_EQ(step.name, "a.out");
  EXPECT_EQ(step.state, "CANCELLED");
  EXPECT_EQ(step.exit_code, "0:9");
  EXPECT_EQ(step.gpus, 8) << "the job's GPUs on both its nodes";
  json running = Step(4, {"x"}, {"sim2"}, {0});
  running["state"] = "running";
  running["end_time"] = nullptr;
  running["tasks"][0]["exit_code"] = nullptr;
  const SacctStep live = StepFromJson(job, running);
  EXPECT_EQ(live.state, "RUNNING");
  EXPECT_EQ(live.exit_code, "0:0");
  EXPECT_EQ(live.cpus, 1) << "one task's share on its one node";
  ASSERT_TRUE(BatchStep(job).has_value());
  EXPECT_EQ(BatchStep(job)->state, "RUNNING");
  json plain = Ran(Job(91, "p", "succeeded"), {"sim1"});
  plain["batch"] = false;
  EXPECT_FALSE(BatchStep(SlurmJobFromJson(plain, "gpu")).has_value()) << "berth submit -- CMD";
  EXPECT_FALSE(BatchStep(SlurmJobFromJson(Job(92, "w", "pending"), "gpu")).has_value())
      << "not started";
}

TEST(SacctGoldenTest, EveryRecordedFormMatchesSlurmsForTheSameJobs) {
  const std::vector<GoldenSection> sections = GoldenSections();
  ASSERT_GE(sections.size(), 14u);
  for (const GoldenSection& section : sections) {
    const bool parsable = section.command.find(" -P") != std::string::npos ||
                          section.command.find(" -p") != std::string::npos;
    std::vector<std::string> want;
    for (const std::string& line : section.lines) want.push_back(AsBerthMeansIt(line, parsable));
    EXPECT_EQ(BerthLines(section.command), want) << section.command;
  }
}

// squeue for the same waiting jobs (golden/array_queue.txt): without -r
// the array's waiting elements are one row, "ID_[0-3%2]" with %K "0-3%2";
// with -r one row each. Slurm's order: priority first (the held job's is
// 0), then id.
TEST(SacctGoldenTest, SqueueFoldsAWaitingArrayAsSlurmsDoes) {
  std::ifstream in(BERTH_SOURCE_DIR "/tests/data/slurm/golden/array_queue.txt");
  ASSERT_TRUE(in.good());
  std::map<std::string, std::vector<std::string>> golden;
  std::string line;
  std::string section;
  while (std::getline(in, line)) {
    if (line.rfind("== ", 0) == 0) {
      section = line.substr(3);
    } else {
      golden[section].push_back(line);
    }
  }
  std::vector<json> raw = LiveJobs();
  raw[1]["priority"] = 2;  // waits
  for (size_t i = 3; i < raw.size(); ++i) {
    raw[i]["priority"] = 1;  // the array's elements, behind it
    raw[i]["reason"] = "priority";
  }
  std::vector<SlurmJob> jobs;
  for (const size_t i : std::vector<size_t>{1, 3, 4, 5, 6, 2, 0}) {
    jobs.push_back(SlurmJobFromJson(raw[i], "gpu"));
  }
  const ParsedFormat parsed = ParseSqueueFormat("%i|%A|%F|%K|%T|%r");
  auto lines = [&](const std::vector<SlurmJob>& shown) {
    std::vector<std::string> out;
    for (const SlurmJob& job : shown) {
      std::string printed = SqueueLine(parsed.format, job, AtEpoch(1796000015));
      printed.pop_back();  // its newline
      out.push_back(Normalize(printed));
    }
    return out;
  };
  EXPECT_EQ(lines(FoldPendingArrayElements(jobs)), golden["squeue -h -o '%i|%A|%F|%K|%T|%r'"]);
  EXPECT_EQ(lines(jobs), golden["squeue -h -r -o '%i|%A|%F|%K|%T|%r'"]);

  // The default columns, the script's "m:ss" for the times.
  const ParsedFormat default_format = ParseSqueueFormat(kSqueueDefaultFormat);
  auto table = [&](const std::vector<SlurmJob>& shown) {
    static const std::regex kTimes(R"(\b[0-9]+:[0-9]{2}\b)");
    std::string header = SqueueHeader(default_format.format);
    header.pop_back();
    std::vector<std::string> out = {Normalize(header)};
    for (const SlurmJob& job : shown) {
      std::string printed = SqueueLine(default_format.format, job, AtEpoch(1796000015));
      printed.pop_back();
      out.push_back(std::regex_replace(Normalize(printed), kTimes, "m:ss"));
    }
    return out;
  };
  EXPECT_EQ(table(FoldPendingArrayElements(jobs)), golden["squeue"]);
  EXPECT_EQ(table(jobs), golden["squeue -r"]);
}

// scontrol show job for the waiting array (golden/array_queue.txt): one
// record, with the array's id, its waiting indices and its %N.
TEST(SacctGoldenTest, ScontrolShowsAWaitingArrayAsOneRecord) {
  std::ifstream in(BERTH_SOURCE_DIR "/tests/data/slurm/golden/array_queue.txt");
  ASSERT_TRUE(in.good());
  std::vector<std::string> keys;
  std::string line;
  bool in_section = false;
  while (std::getline(in, line)) {
    if (line.rfind("== ", 0) == 0) {
      in_section = line == "== scontrol show job -o (the array)";
    } else if (in_section) {
      keys.push_back(line);
    }
  }
  ASSERT_EQ(keys.size(), 7u);
  std::vector<SlurmJob> elements;
  for (json job : LiveJobs()) {
    if (job.value("name", "") != "array") continue;
    job["reason"] = "priority";
    elements.push_back(SlurmJobFromJson(job, "gpu"));
  }
  const std::vector<SlurmJob> folded = FoldPendingArrayElements(elements);
  ASSERT_EQ(folded.size(), 1u);
  const std::string shown =
      " " + Normalize(ScontrolJob(folded[0], AtEpoch(1796000015), "0", Lines::kOne)) + " ";
  for (const std::string& key : keys) {
    EXPECT_NE(shown.find(" " + key + " "), std::string::npos) << key << " not in" << shown;
  }
}

}  // namespace
}  // namespace berth::cli::slurm
