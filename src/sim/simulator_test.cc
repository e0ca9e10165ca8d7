#include "sim/simulator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "sim/cluster_spec.h"
#include "sim/metrics.h"
#include "sim/workload.h"

namespace berth::sim {
namespace {

using core::Duration;
using core::Time;

TraceJob Row(int64_t submit_s, int64_t duration_s, int32_t gpus, std::string queue = "") {
  TraceJob job;
  job.submit = Time::FromSeconds(submit_s);
  job.duration = Duration::Seconds(duration_s);
  job.gpus = gpus;
  job.queue = std::move(queue);
  return job;
}

Workload Pool(int nodes, int gpus, const std::vector<TraceJob>& trace) {
  Partition pool;
  for (int i = 0; i < nodes; ++i) {
    pool.nodes.push_back(core::MakeNodeSpec("n" + std::to_string(i), "V100", gpus));
  }
  WorkloadSet set = BuildWorkloads(trace, {pool});
  EXPECT_TRUE(set.skipped.empty());
  return std::move(set.workloads.front());
}

const JobOutcome& Outcome(const SimResult& result, int64_t id) {
  for (const JobOutcome& job : result.jobs) {
    if (core::Value(job.id) == id) return job;
  }
  ADD_FAILURE() << "no job " << id;
  return result.jobs.front();
}

TEST(SimulatorTest, FifoOnOneNodeQueuesInArrivalOrder) {
  const Workload workload = Pool(1, 8, {Row(0, 100, 8), Row(10, 50, 4), Row(20, 10, 4)});
  const SimResult result = Simulate(workload, "fifo").value();
  ASSERT_EQ(result.jobs.size(), 3u);
  EXPECT_EQ(Outcome(result, 1).first_start, Time::FromSeconds(0));
  EXPECT_EQ(Outcome(result, 2).first_start, Time::FromSeconds(100));
  EXPECT_EQ(Outcome(result, 3).first_start, Time::FromSeconds(100));
  EXPECT_EQ(Outcome(result, 2).wait, Duration::Seconds(90));
  EXPECT_EQ(Outcome(result, 3).finish, Time::FromSeconds(110));
  EXPECT_EQ(result.total_gpus, 8);
}

TEST(SimulatorTest, CompletionsFreeGpusBeforeSimultaneousArrivals) {
  // Job 2 arrives exactly when job 1 ends; it must start at once, and job 3
  // (same submit time, later in the file) right behind it in file order.
  const Workload workload = Pool(1, 8, {Row(0, 100, 8), Row(100, 10, 8), Row(100, 10, 8)});
  const SimResult result = Simulate(workload, "fifo").value();
  EXPECT_EQ(Outcome(result, 2).first_start, Time::FromSeconds(100));
  EXPECT_EQ(Outcome(result, 3).first_start, Time::FromSeconds(110));
}

TEST(SimulatorTest, PreemptionChargesRestartCostAndKeepsWork) {
  // srtf-oracle: the long job runs until the short one arrives, resumes after
  // it with 30 s restart overhead (8 GPUs), and keeps the 100 s it had done.
  const Workload workload = Pool(1, 8, {Row(0, 1000, 8), Row(100, 50, 8)});
  const SimResult result = Simulate(workload, "srtf-oracle").value();
  const JobOutcome& long_job = Outcome(result, 1);
  const JobOutcome& short_job = Outcome(result, 2);
  EXPECT_EQ(short_job.first_start, Time::FromSeconds(100));
  EXPECT_EQ(short_job.finish, Time::FromSeconds(150));
  EXPECT_EQ(long_job.preemptions, 1);
  EXPECT_EQ(long_job.finish, Time::FromSeconds(150 + 30 + 900));
  EXPECT_EQ(long_job.wait, Duration::Seconds(50));
  EXPECT_EQ(long_job.jct() - long_job.wait, Duration::Seconds(1000 + 30));
}

// Issue 30, item 2: with checkpoints every 60 s of run time, the long job
// stopped at 100 s keeps the 60 s it saved and loses 40 s, which it runs
// again after its 30 s restart.
TEST(SimulatorTest, APreemptedRunLosesTheWorkSinceItsLastCheckpoint) {
  const Workload workload = Pool(1, 8, {Row(0, 1000, 8), Row(100, 50, 8)});
  SimOptions options;
  options.checkpoint_interval = Duration::Seconds(60);
  const SimResult result = Simulate(workload, "srtf-oracle", options).value();
  const JobOutcome& long_job = Outcome(result, 1);
  EXPECT_EQ(long_job.preemptions, 1);
  EXPECT_EQ(long_job.lost_work, Duration::Seconds(40));
  EXPECT_EQ(long_job.restart_overhead, Duration::Seconds(30));
  EXPECT_EQ(long_job.finish, Time::FromSeconds(150 + 30 + 940));
  EXPECT_EQ(long_job.jct() - long_job.wait, Duration::Seconds(1000 + 40 + 30));

  const Summary summary = Summarize(result);
  EXPECT_DOUBLE_EQ(summary.lost_gpu_hours, 40.0 * 8 / 3600);
  EXPECT_DOUBLE_EQ(summary.restart_gpu_hours, 30.0 * 8 / 3600);
  EXPECT_EQ(summary.preemptions_per_job.p50, 0);
  EXPECT_EQ(summary.preemptions_per_job.max, 1);

  const SimResult instant = Simulate(workload, "srtf-oracle").value();
  EXPECT_EQ(Outcome(instant, 1).lost_work, Duration::Zero()) << "no interval: nothing lost";
  EXPECT_EQ(Summarize(instant).lost_gpu_hours, 0);
}

// The interval counts each run's own time, restart included: stopped again
// 100 s into its second run (30 s restart, then 70 s of work), the job saved
// at 60 s of that run, so 30 s of work, and loses 40 s again.
TEST(SimulatorTest, CheckpointsCountFromEachRunsStart) {
  const Workload workload = Pool(1, 8, {Row(0, 1000, 8), Row(100, 50, 8), Row(250, 50, 8)});
  SimOptions options;
  options.checkpoint_interval = Duration::Seconds(60);
  const SimResult result = Simulate(workload, "srtf-oracle", options).value();
  const JobOutcome& long_job = Outcome(result, 1);
  ASSERT_EQ(long_job.preemptions, 2);
  EXPECT_EQ(long_job.lost_work, Duration::Seconds(40 + 40));
  EXPECT_EQ(long_job.restart_overhead, Duration::Seconds(30 * 2)) << "the first run had none";
  // Work saved: 60 + 30; it restarts at 300 and runs 30 + 910 s.
  EXPECT_EQ(long_job.finish, Time::FromSeconds(300 + 30 + 910));
}

TEST(SimulatorTest, RestartCostIsConfigurable) {
  const Workload workload = Pool(1, 8, {Row(0, 1000, 1), Row(0, 1000, 7), Row(100, 50, 8)});
  SimOptions options;
  options.restart_cost.one_gpu = Duration::Seconds(3);
  options.restart_cost.up_to_one_node = Duration::Seconds(11);
  const SimResult result = Simulate(workload, "srtf-oracle", options).value();
  EXPECT_EQ(Outcome(result, 1).finish, Time::FromSeconds(150 + 3 + 900));
  EXPECT_EQ(Outcome(result, 2).finish, Time::FromSeconds(150 + 11 + 900));
}

TEST(SimulatorTest, LasWakesUpToDemoteARunningJob) {
  // Job 1 (8 GPUs) crosses 18,000 GPU-seconds at 2,250 s; job 2 waits in the
  // same queue until then and preempts it at that moment, with no other event.
  const Workload workload = Pool(1, 8, {Row(0, 10000, 8), Row(100, 500, 8)});
  const SimResult result = Simulate(workload, "las").value();
  const JobOutcome& second = Outcome(result, 2);
  EXPECT_GE(second.first_start, Time::FromSeconds(2250));
  EXPECT_LT(second.first_start, Time::FromSeconds(2251));
  EXPECT_EQ(Outcome(result, 1).preemptions, 1);
}

TEST(SimulatorTest, SameInputSameResult) {
  std::vector<TraceJob> trace;
  for (int i = 0; i < 300; ++i) {
    trace.push_back(Row(i * 37 % 900, 50 + (i * 7919) % 3000, 1 << (i % 4)));
  }
  std::stable_sort(trace.begin(), trace.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit < b.submit; });
  const Workload workload = Pool(3, 8, trace);
  for (const char* policy : {"fifo", "sjf-oracle", "srtf-oracle", "las", "slurm", "qssf", "berth",
                             "berth-gittins", "berth-oracle"}) {
    const SimResult a = Simulate(workload, policy).value();
    const SimResult b = Simulate(workload, policy).value();
    ASSERT_EQ(a.jobs.size(), b.jobs.size());
    for (size_t i = 0; i < a.jobs.size(); ++i) {
      EXPECT_EQ(a.jobs[i].first_start, b.jobs[i].first_start) << policy;
      EXPECT_EQ(a.jobs[i].finish, b.jobs[i].finish) << policy;
    }
    EXPECT_EQ(a.events, b.events);
  }
}

// berth-oracle is berth told the true sizes. Two jobs of one class wait
// behind a run of 500 s: berth cannot tell them apart and starts the
// earlier; told that the later one runs 100 s, berth-oracle starts it first.
TEST(SimulatorTest, BerthOracleRanksByTrueSizes) {
  const Workload workload = Pool(1, 8, {Row(0, 500, 8), Row(10, 5000, 8), Row(20, 100, 8)});
  const SimResult told = Simulate(workload, "berth-oracle").value();
  EXPECT_EQ(Outcome(told, 3).first_start, Time::FromSeconds(500));
  EXPECT_EQ(Outcome(told, 2).first_start, Time::FromSeconds(600));
  const SimResult predicted = Simulate(workload, "berth").value();
  EXPECT_EQ(Outcome(predicted, 2).first_start, Time::FromSeconds(500));
  EXPECT_EQ(Outcome(predicted, 3).first_start, Time::FromSeconds(5500));
}

// Issue 3: no future leakage. Two traces differ only in how long job 1 really
// runs. A policy that read durations before jobs end (an oracle) decides
// differently from the start; the predicting policies must not, until job 1
// has finished in the shorter trace.
TEST(SimulatorTest, PredictingPoliciesNeverReadTheFuture) {
  std::vector<TraceJob> trace;
  trace.push_back(Row(0, 5000, 4));
  // A job between the two lengths of job 1: shortest-remaining-first with
  // the truth preempts job 1 for it only when job 1 runs long.
  trace.push_back(Row(10, 10000, 16));
  for (int i = 2; i < 200; ++i) trace.push_back(Row(i * 20, 100 + (i * 7919) % 2000, 1 << (i % 3)));
  std::vector<TraceJob> longer = trace;
  longer[0].duration = Duration::Seconds(50000);
  const Workload a = Pool(2, 8, trace);
  const Workload b = Pool(2, 8, longer);
  const Time known = Time::FromSeconds(5000);  // job 1 ends here in `a`
  for (const char* policy : {"qssf", "berth", "berth-gittins"}) {
    const SimResult ra = Simulate(a, policy).value();
    const SimResult rb = Simulate(b, policy).value();
    for (size_t i = 1; i < ra.jobs.size(); ++i) {
      if (ra.jobs[i].first_start < known || rb.jobs[i].first_start < known) {
        EXPECT_EQ(ra.jobs[i].first_start, rb.jobs[i].first_start) << policy << " job " << i + 1;
      }
    }
  }
  const SimResult oracle_a = Simulate(a, "srtf-oracle").value();
  const SimResult oracle_b = Simulate(b, "srtf-oracle").value();
  bool differs = false;
  for (size_t i = 1; i < oracle_a.jobs.size(); ++i) {
    const bool early = oracle_a.jobs[i].first_start < known || oracle_b.jobs[i].first_start < known;
    differs |= early && oracle_a.jobs[i].first_start != oracle_b.jobs[i].first_start;
  }
  EXPECT_TRUE(differs) << "the oracle should see the difference early, or the test proves nothing";
}

TEST(SimulatorTest, PredictionErrorAndEtaAccuracyAreMeasured) {
  std::vector<TraceJob> trace;
  // Pairs of whole-node jobs: the second of each pair queues behind the
  // first (so it gets an ETA), and each pair ends before the next arrives
  // (so the predictor has learned from every earlier job).
  for (int i = 0; i < 60; ++i) {
    trace.push_back(Row(i * 2000, 600 + (i % 5) * 60, 8));
    trace.push_back(Row(i * 2000 + 10, 600 + (i % 5) * 60, 8));
  }
  SimOptions options;
  options.measure_eta = true;
  const SimResult result = Simulate(Pool(1, 8, trace), "berth", options).value();
  const Summary summary = Summarize(result);
  ASSERT_TRUE(summary.prediction_mdape.has_value());
  EXPECT_LT(*summary.prediction_mdape, 0.2) << "durations 600..840 s: the median predicts well";
  ASSERT_TRUE(summary.eta_within_25pct.has_value());
  EXPECT_GT(*summary.eta_within_25pct, 0.9) << "the first job of a pair ends when predicted";
  EXPECT_FALSE(Summarize(Simulate(Pool(1, 8, trace), "fifo").value()).prediction_mdape);
  ASSERT_TRUE(summary.eta_p80_coverage.has_value());
  EXPECT_GT(*summary.eta_p80_coverage, 0.5);
  for (const JobOutcome& job : result.jobs) {
    if (job.first_eta && *job.first_eta) {
      ASSERT_TRUE(job.first_eta_interval.has_value()) << core::Value(job.id);
      EXPECT_GE(job.first_eta_interval->low, job.submit);
      EXPECT_LE(job.first_eta_interval->low, job.first_eta_interval->high);
    }
  }
}

// Issue 30, item 3: the coverage counts the jobs that queued on arrival
// (they have a first ETA); a start outside its interval, or no ETA at all,
// is a miss.
TEST(MetricsTest, EtaCoverageIsTheShareOfQueuedJobsStartingInsideTheirInterval) {
  auto job = [](std::optional<std::optional<int64_t>> eta, int64_t start) {
    JobOutcome outcome;
    outcome.first_start = Time::FromSeconds(start);
    if (eta) {
      outcome.first_eta = *eta ? std::optional<Time>(Time::FromSeconds(**eta)) : std::nullopt;
      if (*eta) {
        outcome.first_eta_interval =
            core::EtaInterval{Time::FromSeconds(**eta - 100), Time::FromSeconds(**eta + 200)};
      }
    }
    return outcome;
  };
  const std::vector<JobOutcome> jobs = {
      job(std::optional<int64_t>(1000), 1100),  // inside
      job(std::optional<int64_t>(1000), 900),   // the low end counts
      job(std::optional<int64_t>(1000), 1201),  // after the high end
      job(std::optional<int64_t>(), 500),       // queued, given no ETA
      job(std::nullopt, 0),                     // started on arrival: not counted
  };
  ASSERT_TRUE(EtaIntervalCoverage(jobs).has_value());
  EXPECT_DOUBLE_EQ(*EtaIntervalCoverage(jobs), 2.0 / 4.0);
  EXPECT_FALSE(EtaIntervalCoverage({job(std::nullopt, 0)}).has_value());
}

TEST(WorkloadTest, JobsLargerThanANodeHoldWholeNodes) {
  Partition pool;
  for (int i = 0; i < 4; ++i)
    pool.nodes.push_back(core::MakeNodeSpec("n" + std::to_string(i), "V100", 8));
  const WorkloadSet set = BuildWorkloads({Row(0, 10, 12), Row(0, 10, 32), Row(0, 10, 40)}, {pool});
  ASSERT_EQ(set.workloads[0].jobs.size(), 2u);
  EXPECT_EQ(set.workloads[0].jobs[0].spec.tasks, 2);
  EXPECT_EQ(set.workloads[0].jobs[0].spec.task.gpu, core::WholeGpus(8)) << "whole nodes";
  EXPECT_EQ(set.workloads[0].jobs[1].spec.tasks, 4);
  EXPECT_EQ(set.skipped.at("needs more GPUs than its cluster has"), 1);
}

TEST(WorkloadTest, JobsNoNodeMatchesAreCountedApartFromJobsTooLarge) {
  const Partition pool = ParsePool("2x8xA100[ib]+1x4xH100").value();
  TraceJob ib = Row(0, 10, 1);
  ib.constraint = "ib";
  TraceJob nvlink = Row(0, 10, 1);
  nvlink.constraint = "nvlink";
  TraceJob b200 = Row(0, 10, 1);
  b200.gpu_types = {"B200"};
  TraceJob big_h100 = Row(0, 10, 8);
  big_h100.gpu_types = {"H100"};
  const WorkloadSet set = BuildWorkloads({ib, nvlink, b200, big_h100, Row(0, 10, 64)}, {pool});
  ASSERT_EQ(set.workloads[0].jobs.size(), 1u);
  ASSERT_NE(set.workloads[0].jobs[0].spec.constraints, nullptr);
  EXPECT_EQ(set.workloads[0].jobs[0].spec.constraints->features, "ib");
  EXPECT_EQ(set.skipped.at("no node of its cluster matches its gpu_type and constraint"), 3);
  EXPECT_EQ(set.skipped.at("needs more GPUs than its cluster has"), 1);
}

TEST(SimulatorTest, ConstrainedJobsRunOnlyWhereTheyMayAndWaitForThoseNodes) {
  // Two ib nodes and two plain ones; the ib jobs queue for the ib nodes
  // while the others stay free.
  std::vector<TraceJob> trace;
  for (int i = 0; i < 4; ++i) {
    TraceJob job = Row(0, 100, 8);
    job.constraint = "ib";
    trace.push_back(job);
  }
  trace.push_back(Row(0, 100, 8));
  WorkloadSet set = BuildWorkloads(trace, {ParsePool("2x8xV100[ib]+2x8xV100").value()});
  for (const char* policy : {"fifo", "slurm", "berth", "las"}) {
    const SimResult result = Simulate(set.workloads.front(), policy).value();
    std::vector<int64_t> first_starts;
    for (int64_t id = 1; id <= 4; ++id) {
      first_starts.push_back(Outcome(result, id).first_start.micros() / 1'000'000);
    }
    std::sort(first_starts.begin(), first_starts.end());
    EXPECT_EQ(first_starts, (std::vector<int64_t>{0, 0, 100, 100})) << policy;
    // FIFO's head of line holds it back; the others start it on a plain node.
    const int64_t expected = std::string(policy) == "fifo" ? 100 : 0;
    EXPECT_EQ(Outcome(result, 5).first_start, Time::FromSeconds(expected)) << policy;
  }
}

TEST(ClusterSpecTest, GroupsJoinedByPlusCarryTheirFeatures) {
  const Partition pool = ParsePool("2x8xA100[ib,nvlink]+1x4xH100").value();
  ASSERT_EQ(pool.nodes.size(), 3u);
  EXPECT_EQ(pool.nodes[0].name, "node0000");
  EXPECT_EQ(pool.nodes[2].name, "node0002") << "names run on across groups";
  EXPECT_EQ(pool.nodes[1].gpu_type, "A100");
  EXPECT_EQ(pool.nodes[1].features, (std::set<std::string, std::less<>>{"ib", "nvlink"}));
  EXPECT_EQ(pool.nodes[2].gpus.size(), 4u);
  EXPECT_TRUE(pool.nodes[2].features.empty());
  EXPECT_EQ(ParsePool("80x8xP100").value().nodes.size(), 80u);
  EXPECT_THAT(ParsePool("2x8xA100[ib").status().message(), ::testing::HasSubstr("end with ']'"));
  EXPECT_THAT(ParsePool("2x8xA100[i b]").status().message(),
              ::testing::HasSubstr("'i b' is not a feature name"));
  EXPECT_THAT(ParsePool("2x8xA100+").status().message(),
              ::testing::HasSubstr("expected NODESxGPUSxTYPE[FEATURES] groups"));
}

TEST(WorkloadTest, PartitionsJobsByQueue) {
  Partition a{"a", {core::MakeNodeSpec("a0", "V100", 8)}};
  Partition b{"b", {core::MakeNodeSpec("b0", "V100", 8)}};
  const WorkloadSet set =
      BuildWorkloads({Row(0, 10, 1, "a"), Row(0, 10, 1, "b"), Row(0, 10, 1, "c")}, {a, b});
  ASSERT_EQ(set.workloads.size(), 2u);
  EXPECT_EQ(set.workloads[0].jobs.size(), 1u);
  EXPECT_EQ(core::Value(set.workloads[1].jobs[0].spec.id), 2);
  EXPECT_EQ(set.skipped.at("queue not in --vc-nodes"), 1);
}

TEST(MergeResultsTest, SumsTimelinesAsStepFunctions) {
  SimResult a;
  a.policy = "fifo";
  a.total_gpus = 8;
  a.timeline = {{Time::FromSeconds(0), 2, 8}, {Time::FromSeconds(10), 0, 4}};
  SimResult b;
  b.total_gpus = 16;
  b.timeline = {{Time::FromSeconds(5), 1, 16}, {Time::FromSeconds(10), 0, 0}};
  const SimResult merged = MergeResults({a, b});
  EXPECT_EQ(merged.total_gpus, 24);
  ASSERT_EQ(merged.timeline.size(), 3u);
  EXPECT_EQ(merged.timeline[0].pending_jobs, 2);
  EXPECT_EQ(merged.timeline[1].pending_jobs, 3);
  EXPECT_EQ(merged.timeline[1].busy_gpus, 24);
  EXPECT_EQ(merged.timeline[2].pending_jobs, 0);
  EXPECT_EQ(merged.timeline[2].busy_gpus, 4);
}

TEST(MetricsTest, NearestRankPercentiles) {
  EXPECT_EQ(Percentile({5, 1, 3, 2, 4}, 50), 3);
  EXPECT_EQ(Percentile({5, 1, 3, 2, 4}, 100), 5);
  EXPECT_EQ(Percentile({5, 1, 3, 2, 4}, 1), 1);
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  EXPECT_EQ(Percentile(hundred, 99), 99);
}

TEST(MetricsTest, SummaryOfASmallRun) {
  const Workload workload = Pool(1, 8, {Row(0, 100, 8), Row(0, 100, 8)});
  const Summary summary = Summarize(Simulate(workload, "fifo").value());
  EXPECT_EQ(summary.jobs, 2);
  EXPECT_DOUBLE_EQ(summary.avg_jct_s, 150);
  EXPECT_DOUBLE_EQ(summary.avg_wait_s, 50);
  EXPECT_DOUBLE_EQ(summary.max_wait_s, 100);
  EXPECT_DOUBLE_EQ(summary.makespan_s, 200);
  EXPECT_DOUBLE_EQ(summary.gpu_utilization, 1.0);
  // Fluid SRPT on an 8-GPU machine: both jobs of 800 GPU-s -> 100 s and 200 s.
  EXPECT_DOUBLE_EQ(summary.lb_avg_jct_s, 150);
}

TEST(MetricsTest, FluidBoundPreemptsForShortWork) {
  std::vector<JobOutcome> jobs(2);
  jobs[0].submit = Time::FromSeconds(0);
  jobs[0].duration = Duration::Seconds(100);
  jobs[0].gpus = 1;
  jobs[1].submit = Time::FromSeconds(10);
  jobs[1].duration = Duration::Seconds(10);
  jobs[1].gpus = 1;
  // One GPU: job 2 runs 10..20 (flow 10), job 1 finishes at 110 (flow 110).
  EXPECT_DOUBLE_EQ(FluidSrptAverageJct(jobs, 1), 60);
}

}  // namespace
}  // namespace berth::sim
