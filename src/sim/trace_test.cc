#include "sim/trace.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <utility>

#include "common/testing/temp_dir.h"

namespace berth::sim {
namespace {

using core::Duration;
using core::Time;

int64_t SkippedTotal(const TraceLoad& load) {
  int64_t total = 0;
  for (const auto& [reason, count] : load.skipped) total += count;
  return total;
}

// The reader's promise: every data row read is a job or counted as skipped.
void ExpectEveryRowAccounted(const TraceLoad& load) {
  EXPECT_EQ(load.rows, static_cast<int64_t>(load.jobs.size()) + SkippedTotal(load));
}

// A scratch directory that also writes gzip files.
class TraceDir : public test_support::TempDir {
 public:
  std::string WriteGzip(const std::string& name, std::string_view contents) const {
    const std::string path = Path(name);
    gzFile file = gzopen(path.c_str(), "wb");
    EXPECT_NE(file, nullptr) << path;
    EXPECT_EQ(gzwrite(file, contents.data(), static_cast<unsigned>(contents.size())),
              static_cast<int>(contents.size()));
    EXPECT_EQ(gzclose(file), Z_OK);
    return path;
  }
};

TraceLoad ReadOk(const std::string& path, TraceFormat format, const ReadOptions& options = {}) {
  Result<TraceLoad> load = ReadTrace(path, format, options);
  EXPECT_TRUE(load.ok()) << load.status().ToString();
  return load.ok() ? std::move(load).value() : TraceLoad{};
}

// Real traces must be present: a missing file fails the test, never skips it.
TraceLoad ReadShared(const std::string& relative, TraceFormat format,
                     const ReadOptions& options = {}) {
  const std::string path = std::string(BERTH_SHARED_DIR) + "/" + relative;
  EXPECT_TRUE(std::filesystem::is_regular_file(path))
      << "missing shared trace " << path << " (BERTH_SHARED_DIR=" << BERTH_SHARED_DIR << ")";
  return ReadOk(path, format, options);
}

Time At(std::string_view text) {
  Result<Time> time = ParseTimeArg(text);
  EXPECT_TRUE(time.ok()) << time.status().ToString();
  return time.ok() ? *time : Time::Infinite();
}

// --- ParseDecimalMicros -----------------------------------------------------

TEST(ParseDecimalMicrosTest, ParsesDecimalSecondsExactly) {
  const std::pair<std::string_view, int64_t> cases[] = {
      {"11.8", 11'800'000},
      {"2240194.0", 2'240'194'000'000},
      {"42", 42'000'000},
      {"0.000001", 1},
      {"0", 0},
      {"007.50", 7'500'000},
      {"1.0000000", 1'000'000},  // digits past the microsecond are fine as zeros
      {"9223372036854.775807", std::numeric_limits<int64_t>::max()},
  };
  for (const auto& [text, micros] : cases) {
    EXPECT_EQ(ParseDecimalMicros(text), std::optional<int64_t>(micros)) << text;
  }
}

TEST(ParseDecimalMicrosTest, RejectsMalformedNegativeTooFineAndOverflow) {
  const std::string_view cases[] = {
      "",
      "-1",
      "+1",
      "1e3",
      "1.",
      ".5",
      "1.0000001",
      "1,5",
      " 1",
      "1 ",
      "abc",
      "1.2.3",
      "0x10",
      "nan",
      "9223372036854.775808",  // one microsecond past int64
      "99999999999999999999",
  };
  for (std::string_view text : cases) {
    EXPECT_EQ(ParseDecimalMicros(text), std::nullopt) << "'" << text << "'";
  }
}

// --- ParseTimeArg -----------------------------------------------------------

TEST(ParseTimeArgTest, DatesAreUtc) {
  EXPECT_EQ(At("1970-01-01"), Time::Epoch());
  EXPECT_EQ(At("1969-12-31"), Time::FromSeconds(-86400));
  EXPECT_EQ(At("2017-10-01"), Time::FromSeconds(1'506'816'000));
  EXPECT_EQ(At("2017-10-01 08:30:00"), Time::FromSeconds(1'506'816'000 + 8 * 3600 + 30 * 60));
  EXPECT_EQ(At("2000-02-29"), Time::FromSeconds(951'782'400));  // 400-year leap day
  EXPECT_EQ(At("2017-12-31 23:59:59"), Time::FromSeconds(1'514'764'799));
}

TEST(ParseTimeArgTest, PlainNumbersAreSeconds) {
  EXPECT_EQ(At("86400"), Time::FromSeconds(86400));
  EXPECT_EQ(At("3600.5"), Time::FromMicros(3'600'500'000));
}

TEST(ParseTimeArgTest, RejectsBadTimesNamingTheText) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"2017-13-01", "month"},
      {"2017-00-10", "month"},
      {"2017-02-29", "day"},
      {"1900-02-29", "day"},
      {"2017-04-31", "day"},
      {"2017-10-00", "day"},
      {"2017-10-01 24:00:00", "time"},
      {"2017-10-01 23:60:00", "time"},
      {"2017-10-1", "YYYY-MM-DD"},
      {"2017-10-01T00:00:00", "YYYY-MM-DD"},
      {"yesterday", "seconds"},
      {"-5", "YYYY-MM-DD"},
      {"", "seconds"},
  };
  for (const auto& [text, complaint] : cases) {
    Result<Time> time = ParseTimeArg(text);
    ASSERT_FALSE(time.ok()) << text;
    EXPECT_EQ(time.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(time.status().message().find(complaint), std::string::npos)
        << time.status().message();
    EXPECT_NE(time.status().message().find("'" + std::string(text) + "'"), std::string::npos)
        << time.status().message();
  }
}

// --- ParseTraceFormat -------------------------------------------------------

TEST(ParseTraceFormatTest, KnowsThreeFormats) {
  EXPECT_EQ(ParseTraceFormat("philly").value(), TraceFormat::kPhilly);
  EXPECT_EQ(ParseTraceFormat("itp").value(), TraceFormat::kItp);
  EXPECT_EQ(ParseTraceFormat("csv").value(), TraceFormat::kCsv);
  Result<TraceFormat> unknown = ParseTraceFormat("swf");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  for (std::string_view word : {"'swf'", "philly", "itp", "csv"}) {
    EXPECT_NE(unknown.status().message().find(word), std::string::npos) << word;
  }
}

// --- Generic CSV ------------------------------------------------------------

class TraceFileTest : public ::testing::Test {
 protected:
  TraceDir dir_;
};

TEST_F(TraceFileTest, CsvReadsEveryColumnInAnyOrder) {
  const std::string path = dir_.Write(
      "all.csv",
      "preemptible,name,gpus,priority,tasks,queue,user,estimate_s,limit_s,duration_s,submit_s,id\n"
      "true,train,8,-3,2,vision,alice,90.5,120,100.25,7.5,job-1\n");
  const TraceLoad load = ReadOk(path, TraceFormat::kCsv);
  ASSERT_EQ(load.jobs.size(), 1u);
  const TraceJob& job = load.jobs[0];
  EXPECT_EQ(job.line, 2);
  EXPECT_EQ(job.trace_id, "job-1");
  EXPECT_EQ(job.submit, Time::FromMicros(7'500'000));
  EXPECT_EQ(job.duration, Duration::Micros(100'250'000));
  EXPECT_EQ(job.time_limit, Duration::Seconds(120));
  EXPECT_EQ(job.estimate, Duration::Micros(90'500'000));
  EXPECT_EQ(job.gpus, 8);
  EXPECT_EQ(job.tasks, 2);
  EXPECT_EQ(job.queue, "vision");
  EXPECT_EQ(job.user, "alice");
  EXPECT_EQ(job.name, "train");
  EXPECT_EQ(job.priority, -3);
  EXPECT_TRUE(job.preemptible);
  EXPECT_TRUE(load.skipped.empty());
}

TEST_F(TraceFileTest, CsvEmptyOptionalFieldsAreNotGivenAndZeroGpuJobsAreKept) {
  const std::string path = dir_.Write("sparse.csv",
                                      "submit_s,duration_s,gpus,limit_s,tasks,preemptible\n"
                                      "1,2,0,,,\n"
                                      "3,4,4,5,,0\n");
  const TraceLoad load = ReadOk(path, TraceFormat::kCsv);
  ASSERT_EQ(load.jobs.size(), 2u);
  EXPECT_EQ(load.jobs[0].gpus, 0);  // a CPU-only job is a job
  EXPECT_EQ(load.jobs[0].time_limit, std::nullopt);
  EXPECT_EQ(load.jobs[0].tasks, 0);  // the simulator splits by node size
  EXPECT_EQ(load.jobs[1].time_limit, Duration::Seconds(5));
  EXPECT_FALSE(load.jobs[1].preemptible);
  ExpectEveryRowAccounted(load);
}

TEST_F(TraceFileTest, CsvModelsAndConstraintsAreReadAndCheckedPerRow) {
  const std::string path = dir_.Write("constrained.csv",
                                      "submit_s,duration_s,gpus,gpu_type,constraint\n"
                                      "1,2,1,A100|H100,ib&(nvlink|!spot)\n"
                                      "3,4,4,,\n"
                                      "5,6,1,A100||H100,\n"
                                      "7,8,1,,ib&\n");
  const TraceLoad load = ReadOk(path, TraceFormat::kCsv);
  ASSERT_EQ(load.jobs.size(), 2u);
  EXPECT_EQ(load.jobs[0].gpu_types, (std::vector<std::string>{"A100", "H100"}));
  EXPECT_EQ(load.jobs[0].constraint, "ib&(nvlink|!spot)");
  EXPECT_TRUE(load.jobs[1].gpu_types.empty());
  EXPECT_EQ(load.jobs[1].constraint, "");
  EXPECT_EQ(load.skipped.at("bad gpu_type"), 1);
  EXPECT_EQ(load.skipped.at("bad constraint"), 1);
  ASSERT_EQ(load.examples.size(), 2u);
  EXPECT_EQ(load.examples[1],
            path +
                ":5: constraint: expected a feature name, '!' or '(', found the end at "
                "position 4 of 'ib&', got 'ib&'");
  ExpectEveryRowAccounted(load);
}

TEST_F(TraceFileTest, LinesAreFileLinesThroughCrlfBomBlankLinesAndNoFinalNewline) {
  const std::string path = dir_.Write("crlf.csv",
                                      "\xEF\xBB\xBFsubmit_s, duration_s ,gpus\r\n"
                                      "1,10,1\r\n"
                                      "\r\n"
                                      "2,20,2\r\n"
                                      "3,30,3");
  const TraceLoad load = ReadOk(path, TraceFormat::kCsv);
  EXPECT_EQ(load.rows, 3);  // a blank line is not a row
  ASSERT_EQ(load.jobs.size(), 3u);
  EXPECT_EQ(load.jobs[0].line, 2);
  EXPECT_EQ(load.jobs[1].line, 4);
  EXPECT_EQ(load.jobs[2].line, 5);
  EXPECT_EQ(load.jobs[2].duration, Duration::Seconds(30));
}

TEST_F(TraceFileTest, CsvUnknownColumnIsNamedWithTheKnownOnes) {
  const std::string path = dir_.Write("unknown.csv", "submit_s,duration_s,gpus,gpu_count\n");
  Result<TraceLoad> load = ReadTrace(path, TraceFormat::kCsv);
  ASSERT_FALSE(load.ok());
  EXPECT_EQ(load.status().code(), StatusCode::kInvalidArgument);
  const std::string& message = load.status().message();
  EXPECT_NE(message.find(path + ":1:"), std::string::npos) << message;
  EXPECT_NE(message.find("'gpu_count'"), std::string::npos) << message;
  for (std::string_view known : {"submit_s", "duration_s", "limit_s", "preemptible"}) {
    EXPECT_NE(message.find(known), std::string::npos) << message;
  }
}

TEST_F(TraceFileTest, CsvHeaderErrors) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"submit_s,duration_s\n1,2\n", "missing required column 'gpus'"},
      {"submit_s,duration_s,gpus,gpus\n", "duplicate column 'gpus'"},
      {"\n1,2,3\n", "no header"},
      {"", "no header"},
  };
  for (const auto& [contents, complaint] : cases) {
    Result<TraceLoad> load = ReadTrace(dir_.Write("header.csv", contents), TraceFormat::kCsv);
    ASSERT_FALSE(load.ok()) << contents;
    EXPECT_EQ(load.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(load.status().message().find(complaint), std::string::npos)
        << load.status().message();
  }
}

TEST_F(TraceFileTest, HeaderOnlyFileHasNoRows) {
  const TraceLoad load =
      ReadOk(dir_.Write("empty.csv", "submit_s,duration_s,gpus\n"), TraceFormat::kCsv);
  EXPECT_EQ(load.rows, 0);
  EXPECT_TRUE(load.jobs.empty());
}

// One row per kind of bad row; line 2 is good, so bad rows start at line 3.
constexpr std::string_view kBadRows =
    "id,submit_s,duration_s,gpus,tasks,limit_s,preemptible\n"
    "ok,0,10,4,2,20,1\n"
    "neg-duration,0,-10,1,,,\n"
    "half-gpu,0,10,1.5,,,\n"
    "neg-gpus,0,10,-1,,,\n"
    "short,0,10\n"
    "zero-limit,0,10,1,,0,\n"
    "bad-bool,0,10,1,,,yes\n"
    "gang,0,10,6,4,,\n"
    "quoted,0,10,\"1\",,,\n"
    "bad-submit,soon,10,1,,,\n"
    "too-fine,0,0.0000001,1,,,\n";

TEST_F(TraceFileTest, BadRowsAreCountedByReasonWithFileAndLine) {
  const std::string path = dir_.Write("bad.csv", kBadRows);
  const TraceLoad load = ReadOk(path, TraceFormat::kCsv);
  EXPECT_EQ(load.rows, 11);
  ASSERT_EQ(load.jobs.size(), 1u);
  EXPECT_EQ(load.jobs[0].trace_id, "ok");
  const std::map<std::string, int64_t> expected = {
      {"bad duration_s", 2}, {"bad gpus", 2},        {"wrong column count", 1},
      {"bad limit_s", 1},    {"bad preemptible", 1}, {"gpus not divisible by tasks", 1},
      {"quoted field", 1},   {"bad submit_s", 1},
  };
  EXPECT_EQ(load.skipped, expected);
  ExpectEveryRowAccounted(load);
  ASSERT_EQ(load.examples.size(), 10u);
  EXPECT_EQ(load.examples[0],
            path + ":3: duration_s: must be seconds >= 0 with at most 6 " + "decimals, got '-10'");
  EXPECT_EQ(load.examples[1], path + ":4: gpus: must be a whole number >= 0, got '1.5'");
  EXPECT_EQ(load.examples[3], path + ":6: expected 7 fields, got 3");
  EXPECT_EQ(load.examples[6], path + ":9: gpus: 6 is not divisible by tasks 4");
  EXPECT_NE(load.examples[7].find(path + ":10: double quotes"), std::string::npos);
  EXPECT_NE(load.examples[8].find(":11: submit_s:"), std::string::npos);
}

TEST_F(TraceFileTest, MaxExamplesCapsExamplesButNotCounts) {
  ReadOptions options;
  options.max_examples = 2;
  const TraceLoad load = ReadOk(dir_.Write("bad.csv", kBadRows), TraceFormat::kCsv, options);
  EXPECT_EQ(load.examples.size(), 2u);
  EXPECT_EQ(SkippedTotal(load), 10);
}

TEST_F(TraceFileTest, StrictFailsOnTheFirstBadRowWithTheSameMessage) {
  const std::string path = dir_.Write("bad.csv", kBadRows);
  ReadOptions strict;
  strict.strict = true;
  Result<TraceLoad> load = ReadTrace(path, TraceFormat::kCsv, strict);
  ASSERT_FALSE(load.ok());
  EXPECT_EQ(load.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(load.status().message(), ReadOk(path, TraceFormat::kCsv).examples.at(0));
}

TEST_F(TraceFileTest, StrictAcceptsACleanFile) {
  ReadOptions strict;
  strict.strict = true;
  const TraceLoad load =
      ReadOk(dir_.Write("ok.csv", "submit_s,duration_s,gpus\n1,2,3\n"), TraceFormat::kCsv, strict);
  EXPECT_EQ(load.jobs.size(), 1u);
}

TEST_F(TraceFileTest, WindowIsFromInclusiveToExclusiveAndNotAnExample) {
  const std::string path =
      dir_.Write("window.csv",
                 "submit_s,duration_s,gpus\n99.999999,1,1\n100,1,1\n199.999999,1,1\n"
                 "200,1,1\n");
  ReadOptions options;
  options.filter.from = Time::FromSeconds(100);
  options.filter.to = Time::FromSeconds(200);
  const TraceLoad load = ReadOk(path, TraceFormat::kCsv, options);
  ASSERT_EQ(load.jobs.size(), 2u);
  EXPECT_EQ(load.jobs[0].line, 3);
  EXPECT_EQ(load.jobs[1].line, 4);
  EXPECT_EQ(load.skipped, (std::map<std::string, int64_t>{{"outside --from/--to", 2}}));
  EXPECT_TRUE(load.examples.empty());
  ExpectEveryRowAccounted(load);
}

// --- Files and compression --------------------------------------------------

TEST_F(TraceFileTest, GzipIsDetectedByMagicBytesNotByName) {
  const std::string text = "submit_s,duration_s,gpus\r\n1,11.8,3\r\n2,5.8,2\r\n";
  const TraceLoad plain = ReadOk(dir_.Write("plain.csv.gz", text), TraceFormat::kCsv);
  const TraceLoad gzip = ReadOk(dir_.WriteGzip("packed.csv", text), TraceFormat::kCsv);
  ASSERT_EQ(plain.jobs.size(), 2u);
  ASSERT_EQ(gzip.jobs.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(gzip.jobs[i].line, plain.jobs[i].line);
    EXPECT_EQ(gzip.jobs[i].submit, plain.jobs[i].submit);
    EXPECT_EQ(gzip.jobs[i].duration, plain.jobs[i].duration);
    EXPECT_EQ(gzip.jobs[i].gpus, plain.jobs[i].gpus);
  }
  EXPECT_EQ(gzip.jobs[0].duration, Duration::Micros(11'800'000));
}

TEST_F(TraceFileTest, TruncatedGzipIsAnError) {
  std::string text = "submit_s,duration_s,gpus\n";
  for (int i = 0; i < 1000; ++i) text += std::to_string(i) + ",1,1\n";
  const std::string whole = dir_.WriteGzip("whole.csv.gz", text);
  std::ifstream in(whole, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::string cut = dir_.Write("cut.csv.gz", bytes.substr(0, bytes.size() / 2));
  Result<TraceLoad> load = ReadTrace(cut, TraceFormat::kCsv);
  ASSERT_FALSE(load.ok());
  EXPECT_NE(load.status().message().find(cut), std::string::npos) << load.status().message();
}

TEST_F(TraceFileTest, MissingFileIsNotFound) {
  const std::string path = dir_.Path("nope.csv");
  Result<TraceLoad> load = ReadTrace(path, TraceFormat::kCsv);
  ASSERT_FALSE(load.ok());
  EXPECT_EQ(load.status().code(), StatusCode::kNotFound);
  EXPECT_NE(load.status().message().find(path), std::string::npos);
}

// --- Philly and ITP on small files ------------------------------------------

TEST_F(TraceFileTest, PhillyRowsBecomeUtcJobsWithTheirCluster) {
  const std::string path = dir_.WriteGzip("philly.csv.gz",
                                          "timestamp,duration,num_gpus,gpu_time,cluster\n"
                                          "2017-10-01 00:04:57,2240194.0,8,17921552.0,7f04ca\n"
                                          "2017-10-01 00:05:00,60.0,1.0,60.0,6214e9\n"
                                          "2017-10-01 00:06:00,60.0,1.5,90.0,6214e9\n"
                                          "2017-10-32 00:06:00,60.0,1,60.0,6214e9\n");
  const TraceLoad load = ReadOk(path, TraceFormat::kPhilly);
  ASSERT_EQ(load.jobs.size(), 2u);
  EXPECT_EQ(load.jobs[0].submit, Time::FromSeconds(1'506'816'000 + 4 * 60 + 57));
  EXPECT_EQ(load.jobs[0].duration, Duration::Seconds(2'240'194));
  EXPECT_EQ(load.jobs[0].gpus, 8);
  EXPECT_EQ(load.jobs[0].queue, "7f04ca");
  EXPECT_EQ(load.jobs[1].gpus, 1);  // "1.0" is a whole number
  EXPECT_EQ(load.skipped,
            (std::map<std::string, int64_t>{{"bad num_gpus", 1}, {"bad timestamp", 1}}));
  EXPECT_EQ(load.examples[1], path + ":5: timestamp: day must be 01..31 in that month, got " +
                                  "'2017-10-32 00:06:00'");
}

TEST_F(TraceFileTest, ItpTimesAreSecondsFromTheTraceStart) {
  const std::string path = dir_.Write("itp.csv",
                                      "job_id,submission_time,duration,num_gpu\n"
                                      "965d744f,1932025,2429,64\n");
  const TraceLoad load = ReadOk(path, TraceFormat::kItp);
  ASSERT_EQ(load.jobs.size(), 1u);
  EXPECT_EQ(load.jobs[0].trace_id, "965d744f");
  EXPECT_EQ(load.jobs[0].submit, Time::FromSeconds(1'932'025));
  EXPECT_EQ(load.jobs[0].duration, Duration::Seconds(2429));
  EXPECT_EQ(load.jobs[0].gpus, 64);
}

TEST_F(TraceFileTest, AnotherFormatsHeaderIsRefused) {
  const std::string path =
      dir_.Write("philly.csv", "timestamp,duration,num_gpus,gpu_time,cluster\n");
  Result<TraceLoad> load = ReadTrace(path, TraceFormat::kItp);
  ASSERT_FALSE(load.ok());
  EXPECT_EQ(load.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(load.status().message().find("'timestamp'"), std::string::npos);
}

// --- Real traces in the shared folder ---------------------------------------

constexpr std::string_view kPhilly =
    "data/traces/philly-pollux/philly_jobs_2017-09-04_to_2017-11-30.csv.gz";

TEST(RealTraceTest, PhillyWholeFileReadsCleanly) {
  const TraceLoad load = ReadShared(std::string(kPhilly), TraceFormat::kPhilly);
  EXPECT_EQ(load.rows, 74'167);
  EXPECT_EQ(load.jobs.size(), 74'167u);
  EXPECT_TRUE(load.skipped.empty());
  EXPECT_TRUE(load.examples.empty());
  ASSERT_FALSE(load.jobs.empty());
  EXPECT_EQ(load.jobs[0].line, 2);
  EXPECT_EQ(load.jobs[0].submit, At("2017-09-04 10:30:41"));
  EXPECT_EQ(load.jobs[0].duration, Duration::Seconds(2'240'194));
  EXPECT_EQ(load.jobs[0].gpus, 8);
  EXPECT_EQ(load.jobs[0].queue, "7f04ca");
}

// The reference replay (tools/reference-replay) filters the same window on
// the timestamp text and replays 68,510 jobs.
TEST(RealTraceTest, PhillyOctoberAndNovemberMatchTheReferenceReplay) {
  ReadOptions options;
  options.filter.from = At("2017-10-01");
  options.filter.to = At("2017-12-01");
  const TraceLoad load = ReadShared(std::string(kPhilly), TraceFormat::kPhilly, options);
  EXPECT_EQ(load.jobs.size(), 68'510u);
  EXPECT_EQ(load.skipped, (std::map<std::string, int64_t>{{"outside --from/--to", 5'657}}));
  ExpectEveryRowAccounted(load);
  for (const TraceJob& job : load.jobs) {
    ASSERT_TRUE(job.submit >= *options.filter.from && job.submit < *options.filter.to) << job.line;
  }
}

TEST(RealTraceTest, EveryItpClusterReadsCleanly) {
  const std::pair<std::string_view, size_t> clusters[] = {
      {"01", 1'595},  {"02", 5'778},  {"05", 3'629}, {"06", 2'396},
      {"08", 13'047}, {"09", 11'134}, {"10", 260},
  };
  for (const auto& [cluster, jobs] : clusters) {
    SCOPED_TRACE(cluster);
    const TraceLoad load =
        ReadShared("data/traces/microsoft-itp-2021/raw/cluster" + std::string(cluster) + ".csv",
                   TraceFormat::kItp);
    EXPECT_EQ(load.jobs.size(), jobs);
    EXPECT_EQ(load.rows, static_cast<int64_t>(jobs));
    EXPECT_TRUE(load.skipped.empty());
    EXPECT_TRUE(load.examples.empty());
  }
}

TEST(RealTraceTest, BenchWorkloadReadsExactly) {
  const TraceLoad load = ReadShared("tools/slurm/workloads/wl200_seed1.csv", TraceFormat::kCsv);
  EXPECT_EQ(load.jobs.size(), 200u);
  EXPECT_TRUE(load.skipped.empty());
  ASSERT_FALSE(load.jobs.empty());
  const TraceJob& first = load.jobs[0];
  EXPECT_EQ(first.trace_id, "1");
  EXPECT_EQ(first.submit, Time::Epoch());
  EXPECT_EQ(first.gpus, 3);
  EXPECT_EQ(first.duration, Duration::Micros(11'800'000));
  EXPECT_EQ(first.time_limit, Duration::Seconds(12));
}

}  // namespace
}  // namespace berth::sim
