// The sentences people read for a pending job: the node tally in words and
// the refusal of a job no node could ever host.
#include "server/explain_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/eta_text.h"

namespace berth::server {
namespace {

using ::testing::HasSubstr;

core::NodeTally Tally(int64_t nodes, int64_t fit,
                      std::vector<std::pair<core::NodeRejection, int64_t>> rejected) {
  core::NodeTally tally;
  tally.nodes = nodes;
  tally.fit = fit;
  for (const auto& [rejection, count] : rejected) {
    tally.rejected[static_cast<size_t>(rejection)] = count;
  }
  return tally;
}

store::JobRequest Gpus(int gpus, int tasks = 1) {
  store::JobRequest request;
  request.tasks = tasks;
  request.task.gpu = core::WholeGpus(gpus);
  return request;
}

TEST(ExplainTextTest, TheTallyListsReasonsMostFirstWithTheirNumbers) {
  core::NodeTally tally = Tally(12, 0,
                                {{core::NodeRejection::kDraining, 1},
                                 {core::NodeRejection::kGpuModel, 3},
                                 {core::NodeRejection::kGpus, 8}});
  tally.other_models = {{"H100-80GB", 3}};
  store::JobRequest request = Gpus(4);
  request.gpu_types = {"A100-40GB"};
  EXPECT_EQ(DescribeNodes(tally, request, When::kNow),
            "0 of 12 nodes can start it now: 8 have fewer than 4 free GPUs, 3 have H100-80GB "
            "(asked: A100-40GB), 1 is draining");
}

TEST(ExplainTextTest, EachRejectionHasItsWords) {
  store::JobRequest request = Gpus(2);
  request.task.cpu = core::MilliCpu(1500);
  request.task.memory = core::MemoryMiB(4096);
  request.constraint = "ib&nvlink";
  core::NodeTally tally = Tally(9, 0,
                                {{core::NodeRejection::kDown, 2},
                                 {core::NodeRejection::kNodeList, 1},
                                 {core::NodeRejection::kExcluded, 1},
                                 {core::NodeRejection::kFeatures, 1},
                                 {core::NodeRejection::kCpu, 1},
                                 {core::NodeRejection::kMemory, 1},
                                 {core::NodeRejection::kGpuModel, 2}});
  tally.other_models = {{"H100", 1}, {"", 1}};
  request.gpu_types = {"A100", "B200"};
  const std::string now = DescribeNodes(tally, request, When::kNow);
  EXPECT_THAT(now, HasSubstr("2 are down"));
  EXPECT_THAT(now, HasSubstr("2 have H100 x1, no GPUs x1 (asked: A100|B200)"));
  EXPECT_THAT(now, HasSubstr("1 is not in its nodelist"));
  EXPECT_THAT(now, HasSubstr("1 is excluded"));
  EXPECT_THAT(now, HasSubstr("1 does not match its constraint 'ib&nvlink'"));
  EXPECT_THAT(now, HasSubstr("1 has fewer than 1.5 free CPUs"));
  EXPECT_THAT(now, HasSubstr("1 has less than 4096 MiB of free memory"));
  EXPECT_THAT(DescribeNodes(tally, request, When::kEver),
              HasSubstr("0 of 9 nodes could ever host it"));
  store::JobRequest share;
  share.task.gpu = core::MilliGpu(250);
  EXPECT_EQ(DescribeNodes(Tally(1, 0, {{core::NodeRejection::kGpus, 1}}), share, When::kNow),
            "0 of 1 nodes can start it now: 1 has no GPU with free room for 250 thousandths");
}

TEST(ExplainTextTest, AGangLargerThanTheNodesTogetherSaysHowManyTasksFit) {
  core::NodeTally tally = Tally(2, 2, {});
  tally.tasks = 2;
  EXPECT_EQ(DescribeNodes(tally, Gpus(4, 3), When::kEver),
            "2 of 2 nodes could ever host it; the nodes of one GPU model could host 2 of its 3 "
            "tasks at once");
}

// Issue 29: a Slurm job of one task per node says it wants distinct nodes.
TEST(ExplainTextTest, AGangOnDistinctNodesSaysSoAndNamesTheField) {
  store::JobRequest request = Gpus(1, 3);
  request.distinct_nodes = true;
  core::NodeTally tally = Tally(2, 2, {});
  tally.tasks = 2;
  EXPECT_EQ(DescribeNodes(tally, request, When::kEver),
            "2 of 2 nodes could ever host it; it asks for 3 distinct nodes, one task on each");
  EXPECT_THAT(DescribeNeverFits(tally, request),
              HasSubstr("distinct_nodes: 3 tasks on distinct nodes, but 2 of 2 nodes"));
}

TEST(ExplainTextTest, ARefusalNamesTheFieldThatRulesOutTheMostNodesAndTheLargestFit) {
  core::NodeTally gpus = Tally(4, 0, {{core::NodeRejection::kGpus, 4}});
  gpus.largest_gpus = 4;
  EXPECT_THAT(DescribeNeverFits(gpus, Gpus(8)),
              ::testing::StartsWith("gpus: 8 per task, but the largest node has 4; ask --nodes 2 "
                                    "--gpus 4 (0 of 4 nodes could ever host it"));
  EXPECT_THAT(DescribeNeverFits(gpus, Gpus(6, 2)), HasSubstr("ask --nodes 3 --gpus 4"))
      << "12 GPUs in all, 4 a node";
  core::NodeTally cpu =
      Tally(4, 0, {{core::NodeRejection::kCpu, 3}, {core::NodeRejection::kGpus, 1}});
  cpu.largest_cpu = core::Cores(32);
  store::JobRequest hungry = Gpus(1);
  hungry.task.cpu = core::Cores(64);
  EXPECT_THAT(DescribeNeverFits(cpu, hungry),
              ::testing::StartsWith("cpus: 64 per task, but the largest node has 32"));
  core::NodeTally memory = Tally(1, 0, {{core::NodeRejection::kMemory, 1}});
  memory.largest_memory = core::MemoryMiB(1024);
  store::JobRequest big = Gpus(1);
  big.task.memory = core::MemoryMiB(2048);
  EXPECT_THAT(DescribeNeverFits(memory, big),
              ::testing::StartsWith("memory_mib: 2048 per task, but the largest node has 1024"));
  EXPECT_THAT(DescribeNeverFits(Tally(3, 0, {{core::NodeRejection::kFeatures, 3}}), Gpus(1)),
              ::testing::StartsWith("constraint: "));
  EXPECT_THAT(DescribeNeverFits(Tally(3, 0, {{core::NodeRejection::kNodeList, 3}}), Gpus(1)),
              ::testing::StartsWith("nodelist: "));
  EXPECT_THAT(DescribeNeverFits(gpus, Gpus(8)),
              ::testing::EndsWith("or set wait_for_nodes (berth submit --wait-for-nodes) to queue "
                                  "it for nodes not yet registered"));
  core::NodeTally broken = Tally(1, 0, {{core::NodeRejection::kFeatures, 1}});
  broken.constraint_error = "constraint: expected a feature name at position 3 of 'a&'";
  EXPECT_EQ(DescribeNeverFits(broken, Gpus(1)), *broken.constraint_error);
}

// Issue 27, item 4: the per-user running limit names its numbers and the
// queue that sets it, which may be a parent of the job's.
TEST(ExplainTextTest, AnArrayLimitSaysItsPercentN) {
  store::JobRecord job;
  job.request = Gpus(1);
  job.request.array_index = 3;
  job.request.array_max_running = 2;
  core::PendingJob pending;
  pending.reason = core::ReasonCode::kArrayLimit;
  EXPECT_THAT(DescribePending(pending, job, core::Time(), nullptr, nullptr),
              HasSubstr("its array already has 2 elements running, as many as its %2 allows"));
}

TEST(ExplainTextTest, AUserLimitSaysWhatRunsOfWhatIsAllowedWhere) {
  core::QueueSpec research;
  research.name = "research";
  core::QueueSpec vision;
  vision.name = "vision";
  vision.parent = "research";
  const core::QuotaTree tree = core::QuotaTree::Make({research, vision}).value();
  store::JobRecord job;
  job.request = Gpus(1);
  job.request.queue = "vision";
  core::PendingJob pending;
  pending.reason = core::ReasonCode::kUserLimit;
  pending.position = 2;
  pending.user_limit = core::UserLimitHit{core::UserLimitKind::kGpus, 1, 8000, 8000};
  EXPECT_EQ(DescribePending(pending, job, core::Time(), nullptr, &tree),
            "user limit: 8 GPUs running of 8 allowed in queue vision; position 3 in the queue");
  pending.user_limit = core::UserLimitHit{core::UserLimitKind::kGpus, 0, 1500, 2000};
  EXPECT_THAT(DescribePending(pending, job, core::Time(), nullptr, &tree),
              HasSubstr("user limit: 1.5 GPUs running of 2 allowed in queue research"));
  pending.user_limit = core::UserLimitHit{core::UserLimitKind::kRunningJobs, 1, 1, 1};
  EXPECT_THAT(DescribePending(pending, job, core::Time(), nullptr, &tree),
              HasSubstr("user limit: 1 job running of 1 allowed in queue vision"));
  // A tree replaced since the cycle: the job's own queue is named.
  pending.user_limit = core::UserLimitHit{core::UserLimitKind::kRunningJobs, 7, 4, 4};
  EXPECT_THAT(DescribePending(pending, job, core::Time(), nullptr, &tree),
              HasSubstr("user limit: 4 jobs running of 4 allowed in queue vision"));
}

// Issue 30: one format for an ETA wherever it is shown, "expected 14:05,
// 80%: 13:50-14:40"; the server's sentences in UTC, and a time on another
// day with its date.
TEST(ExplainTextTest, AnEtaSaysTheExpectedStartThenItsEightyPercentInterval) {
  // 2026-12-05 12:00:00 UTC.
  const core::Time noon = core::Time::FromSeconds(1'796'472'000);
  const auto at = [&](int hours, int minutes) {
    return noon + core::Duration::Hours(hours - 12) + core::Duration::Minutes(minutes);
  };
  EXPECT_EQ(EtaText(at(14, 5), at(13, 50), at(14, 40), noon, ClockZone::kUtc, ""),
            "expected 14:05, 80%: 13:50-14:40");
  EXPECT_EQ(EtaText(at(14, 5), at(13, 50), at(33, 10), noon, ClockZone::kUtc, "UTC"),
            "expected 14:05, 80%: 13:50-Dec 06 09:10 UTC");
  EXPECT_EQ(EtaText(at(14, 5), std::nullopt, std::nullopt, noon, ClockZone::kUtc, ""),
            "expected 14:05");

  store::JobRecord job;
  job.request = Gpus(4);
  core::PendingJob pending;
  pending.reason = core::ReasonCode::kResources;
  pending.position = 0;
  pending.eta = at(14, 5);
  pending.eta_interval = core::EtaInterval{at(13, 50), at(14, 40)};
  pending.after_job = core::JobId{3};
  EXPECT_THAT(DescribePending(pending, job, noon),
              HasSubstr("; position 1 in the queue; expected 14:05, 80%: 13:50-14:40 UTC (when "
                        "job 3 ends)"));
}

}  // namespace
}  // namespace berth::server
