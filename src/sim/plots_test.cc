#include "sim/plots.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace berth::sim {
namespace {

namespace fs = std::filesystem;
using core::Duration;
using core::JobId;
using core::Time;

// A day into the epoch, so "seconds since the earliest submit" differs from
// the raw timestamps.
constexpr Time kBase = Time::FromSeconds(86400);

Time At(int64_t micros) { return kBase + Duration::Micros(micros); }

JobOutcome MakeJob(int64_t id, int64_t submit_us, int64_t start_us, int64_t finish_us) {
  JobOutcome job;
  job.id = JobId{id};
  job.trace_line = id + 1;
  job.queue = "default";
  job.gpus = 1;
  job.submit = At(submit_us);
  job.first_start = At(start_us);
  job.finish = At(finish_us);
  job.duration = Duration::Micros(finish_us - start_us);
  job.wait = Duration::Micros(start_us - submit_us);
  return job;
}

SimResult MakeResult(std::string policy) {
  SimResult result;
  result.policy = std::move(policy);
  result.total_gpus = 16;
  return result;
}

void AddPoint(SimResult& result, int64_t at_us, int64_t pending, int64_t busy) {
  result.timeline.push_back({At(at_us), pending, busy});
}

// Two policies over the same three jobs, spanning an hour.
std::vector<SimResult> TwoPolicies() {
  SimResult fifo = MakeResult("fifo");
  fifo.jobs = {MakeJob(1, 0, 0, 600'000'000), MakeJob(2, 5'000'000, 600'000'000, 1'200'000'000),
               MakeJob(3, 9'000'000, 1'200'000'000, 3'600'000'000)};
  AddPoint(fifo, 0, 0, 8);
  AddPoint(fifo, 5'000'000, 1, 8);
  AddPoint(fifo, 9'000'000, 2, 8);
  AddPoint(fifo, 600'000'000, 1, 8);
  AddPoint(fifo, 1'200'000'000, 0, 16);
  AddPoint(fifo, 3'600'000'000, 0, 0);
  SimResult sjf = MakeResult("sjf-oracle");
  sjf.jobs = {MakeJob(1, 0, 0, 600'000'000), MakeJob(2, 5'000'000, 5'000'000, 605'000'000),
              MakeJob(3, 9'000'000, 605'000'000, 2'400'000'000)};
  AddPoint(sjf, 0, 0, 8);
  AddPoint(sjf, 5'000'000, 0, 16);
  AddPoint(sjf, 9'000'000, 1, 16);
  AddPoint(sjf, 605'000'000, 0, 16);
  AddPoint(sjf, 2'400'000'000, 0, 0);
  return {fifo, sjf};
}

// A weeks-long sawtooth queue with one short spike, like a real trace's
// backlog: one point a second (plus a varying fraction, so bucket edges cut
// through steps), 200,000 points.
constexpr int64_t kLongPoints = 200'000;
constexpr int64_t kSpikeIndex = 123'457;
constexpr int64_t kSpikePending = 12'345;

int64_t LongPointTime(int64_t i) { return i * 1'000'000 + (i % 7) * 100'000; }

SimResult LongResult() {
  SimResult result = MakeResult("fifo");
  result.total_gpus = 100;
  result.timeline.reserve(kLongPoints);
  for (int64_t i = 0; i < kLongPoints; ++i) {
    const int64_t pending = i == kSpikeIndex ? kSpikePending : i % 50;
    AddPoint(result, LongPointTime(i), pending, (i * 7919) % 101);
  }
  result.jobs = {MakeJob(1, 0, 0, LongPointTime(kLongPoints - 1))};
  return result;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

size_t Count(std::string_view text, std::string_view needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

bool IsEntity(std::string_view rest) {
  for (const std::string_view entity : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"}) {
    if (rest.starts_with(entity)) return true;
  }
  return false;
}

// Empty when `text` is one element tree rooted at <svg> with balanced tags,
// quoted attributes and only the five predefined entities; otherwise what is
// wrong. Not a full XML parser, but enough to catch broken escaping or nesting.
std::string XmlProblem(std::string_view text) {
  if (!text.starts_with("<svg")) return "does not start with <svg";
  std::vector<std::string> open;
  bool root_closed = false;
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '&' && !IsEntity(text.substr(i))) return "bare & at " + std::to_string(i);
    if (text[i] != '<') {
      if (open.empty() && text[i] != '\n') return "text outside the root at " + std::to_string(i);
      ++i;
      continue;
    }
    const size_t close = text.find('>', i);
    if (close == std::string_view::npos) return "unterminated tag at " + std::to_string(i);
    const std::string_view tag = text.substr(i + 1, close - i - 1);
    if (tag.find('<') != std::string_view::npos) return "< inside a tag at " + std::to_string(i);
    if (Count(tag, "\"") % 2 != 0) return "unbalanced quotes at " + std::to_string(i);
    if (tag.find('&') != std::string_view::npos) {
      for (size_t a = tag.find('&'); a != std::string_view::npos; a = tag.find('&', a + 1)) {
        if (!IsEntity(tag.substr(a))) return "bare & in a tag at " + std::to_string(i);
      }
    }
    if (tag.starts_with('/')) {
      if (open.empty() || open.back() != tag.substr(1)) {
        return "mismatched </" + std::string(tag.substr(1)) + ">";
      }
      open.pop_back();
      root_closed = open.empty();
    } else {
      if (root_closed) return "second root element";
      if (!tag.ends_with('/')) open.emplace_back(tag.substr(0, tag.find_first_of(" /")));
    }
    i = close + 1;
  }
  if (!open.empty()) return "unclosed <" + open.back() + ">";
  return "";
}

// The value of `attribute` on each <polyline>, in document order.
std::vector<std::string> PolylineAttribute(const std::string& svg, const std::string& attribute) {
  std::vector<std::string> values;
  const std::string key = " " + attribute + "=\"";
  for (size_t at = svg.find("<polyline"); at != std::string::npos;
       at = svg.find("<polyline", at + 1)) {
    const size_t end = svg.find('>', at);
    const size_t start = svg.find(key, at);
    if (start == std::string::npos || start > end) {
      values.emplace_back();
      continue;
    }
    const size_t from = start + key.size();
    values.push_back(svg.substr(from, svg.find('"', from) - from));
  }
  return values;
}

size_t PointCount(const std::string& points) { return points.empty() ? 0 : Count(points, " ") + 1; }

double MaxY(const std::vector<PlotPoint>& line) {
  double max_y = 0;
  for (const PlotPoint& p : line) max_y = std::max(max_y, p.y);
  return max_y;
}

class PlotsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("berth-plots-" + std::string(info->name()) + "-" + std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

TEST_F(PlotsTest, WritesACsvPerPolicyThenThreeCharts) {
  const auto paths = WriteReports(dir_.string(), TwoPolicies());
  ASSERT_TRUE(paths.ok()) << paths.status().ToString();
  EXPECT_EQ(*paths, (std::vector<std::string>{Path("jobs-fifo.csv"), Path("jobs-sjf-oracle.csv"),
                                              Path("queue_length.svg"), Path("utilization.svg"),
                                              Path("wait_cdf.svg")}));
  for (const std::string& path : *paths) EXPECT_TRUE(fs::is_regular_file(path)) << path;
}

TEST_F(PlotsTest, CsvHasHeaderAndExactSecondsSinceEarliestSubmit) {
  SimResult result = MakeResult("fifo");
  // Job 2 is listed second but submitted first, so it sets the origin.
  JobOutcome first = MakeJob(1, 3'000'001, 15'500'000, 3'615'500'000);
  first.gpus = 8;
  first.queue = "research";
  first.preemptions = 2;
  first.predicted = Duration::Seconds(3000);
  first.first_eta = At(20'000'000);
  first.first_eta_interval = core::EtaInterval{At(10'000'000), At(40'500'000)};
  JobOutcome second = MakeJob(2, 0, 0, 7'000'000);
  second.first_eta = std::optional<Time>();  // queued, given no ETA
  result.jobs = {first, second};
  ASSERT_TRUE(WriteReports(dir_.string(), {result}).ok());

  EXPECT_EQ(Lines(ReadFile(Path("jobs-fifo.csv"))),
            (std::vector<std::string>{
                "id,trace_line,queue,gpus,submit_s,start_s,finish_s,duration_s,wait_s,jct_s,"
                "preemptions,predicted_s,eta_s,eta_low_s,eta_high_s",
                "1,2,research,8,3.000001,15.5,3615.5,3600,12.499999,3612.499999,2,3000,20,10,40.5",
                "2,3,default,1,0,0,7,7,0,7,0,,,,",
            }));
}

TEST_F(PlotsTest, CsvTimesAreRelativeToEachResultsOwnFirstSubmit) {
  SimResult early = MakeResult("early");
  early.jobs = {MakeJob(1, 0, 1'000'000, 2'000'000)};
  SimResult late = MakeResult("late");
  late.jobs = {MakeJob(1, 100'000'000, 101'000'000, 102'000'000)};
  ASSERT_TRUE(WriteReports(dir_.string(), {early, late}).ok());

  EXPECT_EQ(Lines(ReadFile(Path("jobs-early.csv"))).at(1), "1,2,default,1,0,1,2,1,1,2,0,,,,");
  EXPECT_EQ(Lines(ReadFile(Path("jobs-late.csv"))).at(1), "1,2,default,1,0,1,2,1,1,2,0,,,,");
}

TEST_F(PlotsTest, CsvQuotesQueueNamesWithSeparatorsAndQuotes) {
  SimResult result = MakeResult("fifo");
  result.jobs = {MakeJob(1, 0, 0, 1'000'000)};
  result.jobs[0].queue = "team \"a\",b";
  ASSERT_TRUE(WriteReports(dir_.string(), {result}).ok());

  EXPECT_EQ(Lines(ReadFile(Path("jobs-fifo.csv"))).at(1),
            "1,2,\"team \"\"a\"\",b\",1,0,0,1,1,0,1,0,,,,");
}

TEST_F(PlotsTest, CsvLeavesTimesThatNeverCameEmpty) {
  SimResult result = MakeResult("fifo");
  JobOutcome never_ran = MakeJob(1, 0, 0, 0);
  never_ran.first_start = Time::Infinite();
  never_ran.finish = Time::Infinite();
  never_ran.duration = Duration::Seconds(60);
  result.jobs = {never_ran};
  ASSERT_TRUE(WriteReports(dir_.string(), {result}).ok());

  EXPECT_EQ(Lines(ReadFile(Path("jobs-fifo.csv"))).at(1), "1,2,default,1,0,,,60,0,,0,,,,");
}

TEST_F(PlotsTest, ChartsAreWellFormedWithOneLineAndLegendEntryPerPolicy) {
  ASSERT_TRUE(WriteReports(dir_.string(), TwoPolicies()).ok());
  for (const char* name : {"queue_length.svg", "utilization.svg", "wait_cdf.svg"}) {
    SCOPED_TRACE(name);
    const std::string svg = ReadFile(Path(name));
    EXPECT_EQ(XmlProblem(svg), "");
    EXPECT_NE(svg.find("viewBox=\"0 0 800 450\""), std::string::npos);
    EXPECT_EQ(Count(svg, "<polyline"), 2u);
    EXPECT_EQ(Count(svg, ">fifo</text>"), 1u);
    EXPECT_EQ(Count(svg, ">sjf-oracle</text>"), 1u);
    const std::vector<std::string> points = PolylineAttribute(svg, "points");
    ASSERT_EQ(points.size(), 2u);
    for (const std::string& p : points) EXPECT_GT(PointCount(p), 1u);
  }
}

TEST_F(PlotsTest, EachPolicyGetsItsOwnColour) {
  std::vector<SimResult> results;
  for (const char* name : {"a", "b", "c", "d", "e", "f", "g", "h", "i"}) {
    results.push_back(TwoPolicies()[0]);
    results.back().policy = name;
  }
  ASSERT_TRUE(WriteReports(dir_.string(), results).ok());
  const std::string svg = ReadFile(Path("utilization.svg"));

  const std::vector<std::string> colours = PolylineAttribute(svg, "stroke");
  const std::vector<std::string> dashes = PolylineAttribute(svg, "stroke-dasharray");
  ASSERT_EQ(colours.size(), 9u);
  std::set<std::string> styles;
  for (size_t i = 0; i < colours.size(); ++i) styles.insert(colours[i] + "/" + dashes[i]);
  EXPECT_EQ(styles.size(), 9u);
  EXPECT_EQ(std::set<std::string>(colours.begin(), colours.begin() + 8).size(), 8u);
}

TEST_F(PlotsTest, EscapesPolicyNamesInChartsAndSanitizesThemInFileNames) {
  std::vector<SimResult> results = TwoPolicies();
  results[0].policy = "r&d <beta>";
  const auto paths = WriteReports(dir_.string(), results);
  ASSERT_TRUE(paths.ok()) << paths.status().ToString();

  EXPECT_EQ(paths->front(), Path("jobs-r_d__beta_.csv"));
  const std::string svg = ReadFile(Path("queue_length.svg"));
  EXPECT_EQ(XmlProblem(svg), "");
  EXPECT_NE(svg.find(">r&amp;d &lt;beta&gt;</text>"), std::string::npos);
  EXPECT_EQ(svg.find("r&d"), std::string::npos);
}

TEST_F(PlotsTest, TimeAxisIsInHoursUpToTwoDaysAndInDaysBeyond) {
  SimResult result = MakeResult("fifo");
  AddPoint(result, 0, 1, 1);
  AddPoint(result, Duration::Days(2).micros(), 0, 0);
  ASSERT_TRUE(WriteReports(dir_.string(), {result}).ok());
  EXPECT_NE(ReadFile(Path("queue_length.svg")).find("(hours)"), std::string::npos);

  AddPoint(result, Duration::Days(21).micros(), 0, 0);
  ASSERT_TRUE(WriteReports(dir_.string(), {result}).ok());
  const std::string svg = ReadFile(Path("utilization.svg"));
  EXPECT_NE(svg.find("(days)"), std::string::npos);
  // Three weeks in steps of five days.
  for (const char* label : {">0</text>", ">5</text>", ">10</text>", ">15</text>", ">20</text>"}) {
    EXPECT_NE(svg.find(label), std::string::npos) << label;
  }
}

TEST(PlotLinesTest, ShortTimelineIsDrawnAsExactSteps) {
  SimResult result = MakeResult("fifo");
  AddPoint(result, 10'000'000, 2, 4);
  AddPoint(result, 20'000'000, 5, 8);
  AddPoint(result, 40'000'000, 0, 16);

  EXPECT_EQ(QueueLengthLine(result, At(0), At(60'000'000)),
            (std::vector<PlotPoint>{
                {0, 0}, {10, 0}, {10, 2}, {20, 2}, {20, 5}, {40, 5}, {40, 0}, {60, 0}}));
  EXPECT_EQ(UtilizationLine(result, At(0), At(60'000'000)),
            (std::vector<PlotPoint>{
                {0, 0}, {10, 0}, {10, 0.25}, {20, 0.25}, {20, 0.5}, {40, 0.5}, {40, 1}, {60, 1}}));
}

TEST(PlotLinesTest, LongQueueLineIsCappedAndKeepsItsPeakWhereItHappened) {
  const SimResult result = LongResult();
  const Time end = At(LongPointTime(kLongPoints - 1));
  const std::vector<PlotPoint> line = QueueLengthLine(result, At(0), end);

  EXPECT_LE(line.size(), kMaxPointsPerLine);
  EXPECT_EQ(MaxY(line), static_cast<double>(kSpikePending));
  const double spike_x = Duration::Micros(LongPointTime(kSpikeIndex)).seconds();
  const double bucket = (end - At(0)).seconds() / static_cast<double>(kMaxPointsPerLine / 2);
  for (const PlotPoint& p : line) {
    if (p.y == static_cast<double>(kSpikePending)) {
      EXPECT_NEAR(p.x, spike_x, bucket);
    }
  }
}

TEST(PlotLinesTest, LongUtilizationLineIsCappedAndKeepsBusyGpuHours) {
  const SimResult result = LongResult();
  const Time end = At(LongPointTime(kLongPoints) + 500'000);
  const std::vector<PlotPoint> line = UtilizationLine(result, At(0), end);

  // Exact area: each point's utilization times how long it held.
  double exact = 0;
  for (size_t i = 0; i < result.timeline.size(); ++i) {
    const Time until = i + 1 < result.timeline.size() ? result.timeline[i + 1].at : end;
    exact += static_cast<double>(result.timeline[i].busy_gpus) / 100.0 *
             (until - result.timeline[i].at).seconds();
  }
  double plotted = 0;
  for (size_t i = 0; i + 1 < line.size(); ++i) {
    EXPECT_GE(line[i].y, 0);
    EXPECT_LE(line[i].y, 1);
    plotted += (line[i].y + line[i + 1].y) / 2 * (line[i + 1].x - line[i].x);
  }
  EXPECT_LE(line.size(), kMaxPointsPerLine);
  EXPECT_NEAR(plotted, exact, exact * 1e-9);
}

TEST(PlotLinesTest, WaitCdfCountsSubSecondWaitsAtOneSecond) {
  SimResult result = MakeResult("fifo");
  result.jobs = {MakeJob(1, 0, 500'000, 1'000'000), MakeJob(2, 0, 10'000'000, 11'000'000),
                 MakeJob(3, 0, 10'000'000, 12'000'000),
                 MakeJob(4, 0, 1'000'000'000, 1'000'000'001)};

  const std::vector<PlotPoint> line = WaitCdfLine(result, 3);
  const std::vector<PlotPoint> expected = {{0, 0},    {0, 0.25}, {1, 0.25},
                                           {1, 0.75}, {3, 0.75}, {3, 1}};
  ASSERT_EQ(line.size(), expected.size());
  for (size_t i = 0; i < line.size(); ++i) {
    EXPECT_DOUBLE_EQ(line[i].x, expected[i].x) << i;
    EXPECT_DOUBLE_EQ(line[i].y, expected[i].y) << i;
  }
}

TEST(PlotLinesTest, WaitCdfOfManyDistinctWaitsIsCappedAndRisesToOne) {
  SimResult result = MakeResult("fifo");
  for (int64_t i = 0; i < 60'000; ++i) {
    result.jobs.push_back(MakeJob(i, 0, i * 17'000'003, i * 17'000'003 + 1));
  }
  const std::vector<PlotPoint> line = WaitCdfLine(result, 7);

  EXPECT_LE(line.size(), kMaxPointsPerLine);
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(line.back().y, 1.0);
  for (size_t i = 0; i + 1 < line.size(); ++i) {
    EXPECT_LE(line[i].x, line[i + 1].x) << i;
    EXPECT_LE(line[i].y, line[i + 1].y) << i;
  }
}

TEST_F(PlotsTest, LongRunGivesSmallChartsWithCappedLines) {
  SimResult other = LongResult();
  other.policy = "sjf";
  ASSERT_TRUE(WriteReports(dir_.string(), {LongResult(), other}).ok());
  for (const char* name : {"queue_length.svg", "utilization.svg"}) {
    SCOPED_TRACE(name);
    const std::string svg = ReadFile(Path(name));
    EXPECT_EQ(XmlProblem(svg), "");
    for (const std::string& points : PolylineAttribute(svg, "points")) {
      EXPECT_LE(PointCount(points), kMaxPointsPerLine);
    }
    EXPECT_LT(svg.size(), 200'000u);
  }
}

TEST_F(PlotsTest, SameInputGivesByteIdenticalFiles) {
  std::vector<SimResult> results = TwoPolicies();
  results.push_back(LongResult());
  results.back().policy = "long";
  const auto first = WriteReports((dir_ / "a").string(), results);
  const auto second = WriteReports((dir_ / "b").string(), results);
  ASSERT_TRUE(first.ok() && second.ok());

  ASSERT_EQ(first->size(), second->size());
  for (size_t i = 0; i < first->size(); ++i) {
    EXPECT_EQ(fs::path((*first)[i]).filename(), fs::path((*second)[i]).filename());
    EXPECT_EQ(ReadFile((*first)[i]), ReadFile((*second)[i])) << (*first)[i];
  }
}

TEST_F(PlotsTest, DirectoryUnderARegularFileFailsNamingThePath) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "file") << "not a directory";
  const std::string target = (dir_ / "file" / "out").string();

  const auto paths = WriteReports(target, TwoPolicies());
  ASSERT_FALSE(paths.ok());
  EXPECT_EQ(paths.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(paths.status().message().find(target), std::string::npos) << paths.status().ToString();
}

TEST_F(PlotsTest, UnwritableFileFailsNamingThePath) {
  // A directory where a chart should go cannot be opened as a file.
  fs::create_directories(dir_ / "utilization.svg");

  const auto paths = WriteReports(dir_.string(), TwoPolicies());
  ASSERT_FALSE(paths.ok());
  EXPECT_EQ(paths.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(paths.status().message().find(Path("utilization.svg")), std::string::npos)
      << paths.status().ToString();
}

TEST_F(PlotsTest, RejectsNoResults) {
  const auto paths = WriteReports(dir_.string(), {});
  ASSERT_FALSE(paths.ok());
  EXPECT_EQ(paths.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(PlotsTest, RejectsPoliciesThatWouldShareAFile) {
  std::vector<SimResult> results = TwoPolicies();
  results[0].policy = "a&b";
  results[1].policy = "a<b";

  const auto paths = WriteReports(dir_.string(), results);
  ASSERT_FALSE(paths.ok());
  EXPECT_EQ(paths.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(paths.status().message().find("jobs-a_b.csv"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "jobs-a_b.csv"));
}

}  // namespace
}  // namespace berth::sim
