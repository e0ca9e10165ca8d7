#include "core/runtime_predictor.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <memory>

#include "core/test_builders.h"

namespace berth::core {
namespace {

using testing::At;
using testing::NewJob;
using testing::Secs;

// A fresh id per spec: an id names one job.
JobSpec Spec(const std::string& user, const std::string& name, int gpus,
             const std::string& queue = "vc1") {
  static int64_t next_id = 1;
  return NewJob(next_id++).User(user).Queue(queue).Gpus(gpus).Name(name);
}

TEST(RuntimePredictorTest, ColdStartWithoutHistoryEstimateOrLimit) {
  RuntimePredictor predictor(PredictorConfig{3, 25, Duration::Minutes(30)});
  EXPECT_EQ(predictor.Predict(Spec("alice", "bert", 8)), Duration::Minutes(30));
}

TEST(RuntimePredictorTest, AnswersWithTheMedianOfTheMostSpecificKnownKey) {
  RuntimePredictor predictor;
  for (int64_t seconds : {100, 300, 200})
    predictor.Observe(Spec("alice", "bert", 8), Secs(seconds));
  for (int64_t seconds : {5000, 6000, 7000}) {
    predictor.Observe(Spec("bob", "resnet", 8), Secs(seconds));
  }
  EXPECT_EQ(predictor.Predict(Spec("alice", "bert", 8)), Secs(200));
  // Same user, new name: the user's history (median of alice's three).
  EXPECT_EQ(predictor.Predict(Spec("alice", "gpt", 8)), Secs(200));
  // Unknown user: the queue with 8 GPUs (median of all six).
  EXPECT_EQ(predictor.Predict(Spec("carol", "x", 8)), Secs(5000));
  // Unknown queue and GPU count: everyone.
  EXPECT_EQ(predictor.Predict(Spec("dave", "y", 2, "vc9")), Secs(5000));
}

TEST(RuntimePredictorTest, NeedsMinimumSamplesBeforeAKeyAnswers) {
  RuntimePredictor predictor(PredictorConfig{3, 25, Duration::Hours(1)});
  predictor.Observe(Spec("alice", "bert", 1), Secs(10));
  predictor.Observe(Spec("alice", "bert", 1), Secs(10));
  EXPECT_EQ(predictor.Predict(Spec("alice", "bert", 1)), Duration::Hours(1));
  predictor.Observe(Spec("alice", "bert", 1), Secs(10));
  EXPECT_EQ(predictor.Predict(Spec("alice", "bert", 1)), Secs(10));
}

TEST(RuntimePredictorTest, ForgetsOldRunsBeyondTheWindow) {
  RuntimePredictor predictor(PredictorConfig{1, 3, Duration::Hours(1)});
  for (int64_t seconds : {1000, 1000, 1000, 10, 10}) {
    predictor.Observe(Spec("u", "n", 1), Secs(seconds));
  }
  EXPECT_EQ(predictor.Predict(Spec("u", "n", 1)), Secs(10));
}

TEST(RuntimePredictorTest, BlendsTheUserEstimateAndCapsAtTheLimit) {
  RuntimePredictor predictor;
  for (int i = 0; i < 3; ++i) predictor.Observe(Spec("u", "n", 1), Secs(100));
  JobSpec with_estimate = Spec("u", "n", 1);
  with_estimate.estimate = Secs(400);  // set before its first prediction
  EXPECT_EQ(predictor.Predict(with_estimate), Secs(200)) << "geometric mean of 100 and 400";
  JobSpec new_user = Spec("v", "m", 1, "other");
  RuntimePredictor empty;
  new_user.estimate = Secs(700);
  EXPECT_EQ(empty.Predict(new_user), Secs(700)) << "no history: the estimate";
  JobSpec limited = Spec("u", "n", 1);
  limited.time_limit = Secs(60);
  EXPECT_EQ(predictor.Predict(limited), Secs(60));
}

TEST(RuntimePredictorTest, AJobPastItsPredictionIsExpectedToRunAsLongAgain) {
  RuntimePredictor predictor;
  for (int i = 0; i < 3; ++i) predictor.Observe(Spec("u", "n", 1), Secs(100));
  ClusterState state;
  testing::AddNodes(state, 1, 8);
  JobSpec spec = Spec("u", "n", 1);
  spec.time_limit = Secs(1000);
  state.Submit(spec, At(0));
  state.Start(spec.id, *Place(state.capacity(), ResolveRequest(state.nodes(), spec).request),
              At(0));
  const Job& job = state.Get(spec.id);
  EXPECT_EQ(predictor.Remaining(job, At(40)), Secs(60));
  EXPECT_EQ(predictor.Remaining(job, At(300)), Secs(300)) << "proved wrong: as long again";
  EXPECT_EQ(predictor.Remaining(job, At(800)), Secs(200)) << "but never past the limit";
}

TEST(RuntimePredictorTest, AJobsMemoFollowsNewHistoryAndAnswersOnlyItsWriter) {
  ClusterState state;
  testing::AddNodes(state, 1, 8);
  const JobSpec spec = Spec("u", "n", 1);
  state.Submit(spec, At(0));
  const Job& job = state.Get(spec.id);
  auto teach = [](RuntimePredictor& predictor, int64_t seconds) {
    for (int i = 0; i < 3; ++i) predictor.Observe(Spec("u", "n", 1), Secs(seconds));
  };

  RuntimePredictor first(PredictorConfig{3, 25, Duration::Hours(1)});
  EXPECT_EQ(first.Expected(job), Duration::Hours(1));
  teach(first, 100);  // new keys: the memo written above is rebuilt
  EXPECT_EQ(first.Expected(job), Secs(100));
  teach(first, 300);  // the same keys, a new median
  EXPECT_EQ(first.Expected(job), Secs(300));

  RuntimePredictor second(PredictorConfig{3, 25, Duration::Hours(2)});
  teach(second, 50);
  EXPECT_EQ(second.Expected(job), Secs(50)) << "not the first predictor's memo";
  EXPECT_EQ(first.Expected(job), Secs(300));
  EXPECT_EQ(first.Predict(spec), Secs(300)) << "with or without the memo";

  // Predictors that come and go, possibly at one address, never read a
  // memo written by another.
  for (int round = 0; round < 3; ++round) {
    auto fresh = std::make_unique<RuntimePredictor>(PredictorConfig{3, 25, Duration::Hours(3)});
    EXPECT_EQ(fresh->Expected(job), Duration::Hours(3));
    teach(*fresh, 10 + round);
    EXPECT_EQ(fresh->Expected(job), Secs(10 + round));
  }
}

TEST(RuntimePredictorTest, LearnsOnlyFromObserve) {
  RuntimePredictor predictor;
  const JobSpec job = Spec("u", "n", 1);
  const Duration before = predictor.Predict(job);
  // Asking about jobs, however often, teaches it nothing.
  for (int i = 0; i < 100; ++i) (void)predictor.Predict(Spec("u", "n", 1));
  EXPECT_EQ(predictor.Predict(job), before);
  EXPECT_EQ(predictor.observations(), 0);
}

// Class "q" learns run times of half 100 s, half 1,000 s.
// Counts every kept run time alike, so the two-point class below is half
// and half whatever the order it was observed in.
PredictorConfig Unweighted() {
  PredictorConfig config;
  config.half_life = std::numeric_limits<double>::infinity();
  return config;
}

// `count` finished jobs of queue q, each run `seconds`.
void ObserveRuns(RuntimePredictor& predictor, int count, int64_t seconds) {
  for (int i = 0; i < count; ++i) predictor.Observe(NewJob(10 + i).Queue("q"), Secs(seconds));
}

void ObserveTwoPointClass(RuntimePredictor& predictor) {
  for (int i = 0; i < 3; ++i) {
    predictor.Observe(NewJob(10 + i).Queue("q"), Secs(100));
    predictor.Observe(NewJob(20 + i).Queue("q"), Secs(1000));
  }
}

// Issue 30, item 1: the rank is the Gittins rank over the class's run
// times. Half 100 s, half 1,000 s: a new job's median prediction is 1,000 s,
// its rank 200 s (serve 100 s: done half the time, at a mean cost of 100);
// once it ran past 100 s it is a long one: at 150 s, 850 s left.
TEST(RuntimePredictorTest, RankIsTheGittinsRankOfTheClassRunTimes) {
  RuntimePredictor predictor(Unweighted());
  ObserveTwoPointClass(predictor);
  Job job;
  job.spec = NewJob(1).Queue("q");
  EXPECT_EQ(predictor.Remaining(job, At(0)), Secs(1000));
  EXPECT_EQ(predictor.Rank(job, At(0)), Secs(200));
  job.executed = Secs(150);
  EXPECT_EQ(predictor.Rank(job, At(0)), Secs(850));
  job.executed = Secs(1500);
  EXPECT_EQ(predictor.Rank(job, At(0)), predictor.Remaining(job, At(0))) << "outlived the history";
  job.executed = Secs(0);
  job.spec.time_limit = Secs(150);
  EXPECT_EQ(predictor.Rank(job, At(0)), Secs(150)) << "the limit caps the rank";
}

// The user's estimate sharpens the class's distribution: 4,000 s against a
// median of 1,000 blends to 2,000 (the geometric mean), so the distribution
// is read twice as long: rank 400 s at the start, and the 100 s runs are
// 200 s runs (at 300 s it is a long one: 1,700 s left).
TEST(RuntimePredictorTest, AnEstimateScalesTheRankWithThePrediction) {
  RuntimePredictor predictor(Unweighted());
  ObserveTwoPointClass(predictor);
  Job job;
  job.spec = NewJob(1).Queue("q").Estimate(4000);
  EXPECT_EQ(predictor.Remaining(job, At(0)), Secs(2000));
  EXPECT_EQ(predictor.Rank(job, At(0)), Secs(400));
  job.executed = Secs(300);
  EXPECT_EQ(predictor.Rank(job, At(0)), Secs(1700));
}

// Half the class runs 100 s, half 1,000 s: a new job expects 550 s on
// average (its median answer says 1,000); one past 100 s is one of the long
// ones, 850 s from the end after 150 s.
TEST(RuntimePredictorTest, MeanRemainingAveragesTheClassRunTimesItHasNotOutlived) {
  RuntimePredictor predictor(Unweighted());
  ObserveTwoPointClass(predictor);
  Job job;
  job.spec = NewJob(1).Queue("q");
  EXPECT_EQ(predictor.MeanRemaining(job, At(0)), Secs(550));
  job.executed = Secs(150);
  EXPECT_EQ(predictor.MeanRemaining(job, At(0)), Secs(850));
  job.executed = Secs(1500);
  EXPECT_EQ(predictor.MeanRemaining(job, At(0)), predictor.Remaining(job, At(0)))
      << "outlived the history";
}

// The ETA plan's replays draw run times from the same distribution (eta.h):
// a new job of the two-point class runs 100 s in one replay of two and
// 1,000 s in the other; one past 100 s has 850 s left in both. Like the
// rank, the user's estimate scales it and the time limit caps it.
TEST(RuntimePredictorTest, RemainingQuantilesSpreadOverTheClassRunTimes) {
  RuntimePredictor predictor(Unweighted());
  ObserveTwoPointClass(predictor);
  Job job;
  job.spec = NewJob(1).Queue("q");
  EXPECT_EQ(predictor.RemainingQuantiles(job, At(0), 2), (std::vector{Secs(100), Secs(1000)}));
  job.executed = Secs(150);
  EXPECT_EQ(predictor.RemainingQuantiles(job, At(0), 2), (std::vector{Secs(850), Secs(850)}));
  job.executed = Secs(1500);
  EXPECT_TRUE(predictor.RemainingQuantiles(job, At(0), 2).empty()) << "outlived the history";
  job.executed = Secs(0);
  job.spec = NewJob(1).Queue("q").Estimate(4000);
  EXPECT_EQ(predictor.RemainingQuantiles(job, At(0), 2), (std::vector{Secs(200), Secs(2000)}));
  job.spec = NewJob(1).Queue("q").Limit(150);
  EXPECT_EQ(predictor.RemainingQuantiles(job, At(0), 2), (std::vector{Secs(100), Secs(150)}));
  EXPECT_TRUE(RuntimePredictor(Unweighted()).RemainingQuantiles(job, At(0), 2).empty())
      << "no history answers it";
}

// The distribution reads past the median's window: five runs of 10,000 s,
// then 25 of 100 s. The point prediction follows the latest 25 (100 s), but
// a job that ran 500 s has not outlived its class: it is one of the long
// ones, 9,500 s from the end (with only the latest 25 it would be taken to
// need as long again, 500 s, and be stopped as if nearly done).
TEST(RuntimePredictorTest, TheDistributionKeepsTheTailBeyondTheWindow) {
  RuntimePredictor predictor;
  ObserveRuns(predictor, 5, 10000);
  ObserveRuns(predictor, 25, 100);
  Job job;
  job.spec = NewJob(1).Queue("q");
  EXPECT_EQ(predictor.Predict(job.spec), Secs(100));
  job.executed = Secs(500);
  EXPECT_EQ(predictor.Rank(job, At(0)), Secs(9500));
  EXPECT_EQ(predictor.MeanRemaining(job, At(0)), Secs(9500));
}

// Recency weights: 25 runs of 1,000 s, then 25 of 100 s, half-life 25. The
// older 25 weigh exactly half the newer (each is one half-life older than
// its counterpart), so a new job expects (2 x 100 + 1 x 1,000) / 3 = 400 s,
// where counting all alike says 550.
TEST(RuntimePredictorTest, OlderRunTimesWeighLessByTheHalfLife) {
  RuntimePredictor predictor;
  RuntimePredictor alike(Unweighted());
  for (RuntimePredictor* each : {&predictor, &alike}) {
    ObserveRuns(*each, 25, 1000);
    ObserveRuns(*each, 25, 100);
  }
  Job job;
  job.spec = NewJob(1).Queue("q");
  EXPECT_EQ(predictor.MeanRemaining(job, At(0)), Secs(400));
  EXPECT_EQ(alike.MeanRemaining(job, At(0)), Secs(550));
}

// The history is a ring: past `history` run times the oldest goes.
TEST(RuntimePredictorTest, ForgetsRunTimesBeyondTheHistory) {
  PredictorConfig config = Unweighted();
  config.window = 3;
  config.history = 4;
  RuntimePredictor predictor(config);
  ObserveRuns(predictor, 1, 10000);
  ObserveRuns(predictor, 4, 100);
  Job job;
  job.spec = NewJob(1).Queue("q");
  job.executed = Secs(200);
  EXPECT_EQ(predictor.MeanRemaining(job, At(0)), predictor.Remaining(job, At(0)))
      << "the 10,000 s run fell off: the job outlived what is kept";
}

// Bursts (bursts.h): unnamed jobs of one user, queue and GPU count that
// arrive together. The class (queue "q", 1 GPU) has run 10,000 s three
// times; a burst of three whose first member ended after 100 s.
class BurstPredictorTest : public ::testing::Test {
 protected:
  BurstPredictorTest() : predictor_(Config()) {
    for (int64_t id = 101; id <= 103; ++id) predictor_.Observe(Member(id, 0), Secs(10000));
    for (int64_t id = 1; id <= 3; ++id) {
      jobs_[id].spec = Member(id, id * 10);
      predictor_.Submitted(jobs_[id].spec);
    }
  }
  static PredictorConfig Config() {
    PredictorConfig config;
    config.bursts.gap = Secs(300);
    config.probe = Secs(600);
    return config;
  }
  static JobSpec Member(int64_t id, int64_t submit_s) {
    return NewJob(id).User("u").Queue("q").Gpus(1).Submit(submit_s);
  }
  RuntimePredictor predictor_;
  std::map<int64_t, Job> jobs_;
};

TEST_F(BurstPredictorTest, UntilAMemberStartsItsBurstRanksAsTheProbe) {
  EXPECT_EQ(predictor_.Rank(jobs_[2], At(100)), Secs(600));
  EXPECT_EQ(predictor_.MeanRemaining(jobs_[2], At(100)), Secs(600));
  EXPECT_EQ(predictor_.KnownMeanRemaining(jobs_[2], At(100)), Secs(10000))
      << "what is known of its size: its class";
  EXPECT_EQ(predictor_.Remaining(jobs_[2], At(100)), Secs(10000)) << "the plan reads the class";
  predictor_.Started(jobs_[1].spec.id, At(100));
  EXPECT_EQ(predictor_.Rank(jobs_[2], At(200)), Secs(10000)) << "probed: the class answers";
}

TEST_F(BurstPredictorTest, ItsFinishedMembersAnswerForTheRestFromTheFirst) {
  predictor_.Started(jobs_[1].spec.id, At(100));
  predictor_.Observe(jobs_[1].spec, Secs(100));
  EXPECT_EQ(predictor_.Predict(jobs_[2].spec), Secs(100));
  EXPECT_EQ(predictor_.Rank(jobs_[2], At(300)), Secs(100));
  EXPECT_EQ(predictor_.Predict(Member(104, 5000)), Secs(10000)) << "not a member";
}

TEST_F(BurstPredictorTest, ARunningMemberThatOutranTheFinishedOnesSilencesThem) {
  predictor_.Started(jobs_[1].spec.id, At(100));
  predictor_.Started(jobs_[3].spec.id, At(100));
  predictor_.Observe(jobs_[1].spec, Secs(100));  // ended at 200
  EXPECT_EQ(predictor_.Remaining(jobs_[2], At(200)), Secs(100)) << "member 3 has run 100 s";
  EXPECT_EQ(predictor_.Remaining(jobs_[2], At(250)), Secs(10000)) << "150 s: outran it";
  Job outsider;
  outsider.spec = Member(104, 0);
  EXPECT_EQ(predictor_.Rank(jobs_[2], At(250)), predictor_.Rank(outsider, At(250)))
      << "ranked by its class, as a job of no burst";
  EXPECT_GT(predictor_.Rank(jobs_[2], At(250)), Secs(100));
}

TEST_F(BurstPredictorTest, ABurstsWindowGoesWithTheBurst) {
  for (int64_t id = 1; id <= 3; ++id) {
    predictor_.Started(jobs_[id].spec.id, At(100));
    predictor_.Observe(jobs_[id].spec, Secs(100));
  }
  EXPECT_EQ(predictor_.bursts(), 1u) << "still open";
  const size_t keys = predictor_.keys();
  for (int64_t id = 4; id < 1004; ++id) {
    const JobSpec spec = Member(id, id * 1000);
    predictor_.Submitted(spec);
    predictor_.Observe(spec, Secs(5));
  }
  EXPECT_EQ(predictor_.bursts(), 1u) << "each closed and empty burst is dropped";
  EXPECT_EQ(predictor_.keys(), keys) << "and its window with it";
}

}  // namespace
}  // namespace berth::core
