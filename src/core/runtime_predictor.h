// Runtime prediction from history: how long will this job run, judged only
// from jobs that have already finished.
//
// The predictor keeps, per key, the run times of the most recent finished
// jobs and answers with the median of the latest few (`window`). Keys go
// from specific to general, and a job is answered by the first key with
// enough history:
//   user + name + GPUs, user + name, user + GPUs, user,
//   queue + GPUs, queue, GPUs, everyone.
// Traces without users or names (Philly, ITP) simply start at the queue.
//
// The user's own words are blended in: an estimate counts as much as the
// history (geometric mean) or stands alone without history, and a time limit
// caps every prediction (the job is stopped there).
//
// The distribution of sizes (the Gittins rank, the mean remaining) reads
// more of the past than the median: a tail needs more run times than a
// typical size does (of 25, the largest stands for the top 4%, so every job
// in that tail looked as if it had outlived its class). Every kept run time
// (`history`) counts, each weighted by its recency: half as much for every
// `half_life` run times of its key observed after it, so the shape still
// follows a class that changes.
//
// Jobs without a name are also grouped by how they arrive (bursts.h): a
// burst's finished members are the most specific key of the rest, asked
// from one finished member on, while no running member has outrun them.
// Until a member of a burst has started, its pending members rank as jobs
// of `probe` (config), so that one starts early and tells the rest.
//
// A job that has run past its prediction has proved it wrong; its remaining
// time is then taken to be as long again as it has run so far (capped by its
// time limit), so ordering falls back to least attained service for it.
//
// No future leakage: the predictor learns only through Observe, which the
// owner calls when a job has finished; nothing reads a job's true duration
// before that. Deterministic: lookups only, never iteration over hashes.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/bursts.h"
#include "core/job.h"
#include "core/runtime_estimator.h"

namespace berth::core {

struct PredictorConfig {
  int32_t min_samples = 3;  // a key answers only with this many finished jobs
  int32_t window = 25;      // the latest run times whose median predicts
  // The answer before anything has finished (and no estimate or limit).
  Duration cold_start = Duration::Hours(1);
  // Run times kept per key for the size distribution, at least `window`:
  // eight half-lives, so what falls off weighs under 1/256 of the latest.
  int32_t history = 200;
  // In run times of the key, at least 1; infinity counts every kept run
  // time alike.
  double half_life = 25;
  BurstConfig bursts = {};
  // What a pending member of a burst none of whose members has started
  // ranks as, and weighs in the gain rule (victims.h) against stops that
  // lose no work: a quantum whose run tells the burst's size. Zero: no
  // probing.
  Duration probe = Duration::Minutes(10);
};

class RuntimePredictor final : public RuntimeEstimator {
 public:
  explicit RuntimePredictor(PredictorConfig config = {});
  // Jobs' memos point into this predictor's windows, under its token.
  RuntimePredictor(const RuntimePredictor&) = delete;
  RuntimePredictor& operator=(const RuntimePredictor&) = delete;

  // The owner reports each job's life (the simulator and the server alike):
  // its submission (in submit order), its first start, and its end: finished
  // (Observe) or gone without a run time to learn from (Forget).
  void Submitted(const JobSpec& spec);
  void Started(JobId job, Time now);
  void Forget(JobId job);
  // Learns from a finished job. `run_time` is its real run time, without
  // time lost to restarts.
  void Observe(const JobSpec& spec, Duration run_time);

  // The predicted run time of the whole job.
  Duration Predict(const JobSpec& spec) const {
    return Predict(spec, WindowsOf(spec), std::nullopt);
  }

  // The same, with which windows answer the job kept in its EstimatorMemo.
  Duration Expected(const Job& job) const override;
  Duration Remaining(const Job& job, Time now) const override;
  // The Gittins rank of the job's attained run time over the run times of
  // the first key with enough history (the same key that predicts it),
  // capped by what its time limit leaves; Remaining when there is no such
  // history or the job outlived all of it.
  Duration Rank(const Job& job, Time now) const override;
  // The mean of (size - run time) over the same key's run times above the
  // job's run time, weighted as the rank's, capped as Rank; Remaining when
  // there is no such history or the job outlived all of it.
  Duration MeanRemaining(const Job& job, Time now) const override;
  // MeanRemaining without the probe.
  Duration KnownMeanRemaining(const Job& job, Time now) const override;
  // The same key's run times above the job's run time, weighted as the
  // rank's, at `count` quantiles, less that run time, capped as Rank; empty
  // when there is no such history or the job outlived all of it. A pending
  // member of a burst not yet probed answers its size, not the probe: the
  // plan needs how long it runs, not where it ranks.
  std::vector<Duration> RemainingQuantiles(const Job& job, Time now, int32_t count) const override;

  int64_t observations() const { return observations_; }
  size_t bursts() const { return bursts_.size(); }  // remembered (bounded)
  size_t keys() const { return windows_.size(); }   // with history (bounded)

 private:
  struct Window {
    std::vector<int64_t> recent;         // ring of up to `history` run times, in microseconds
    std::vector<double> recent_weights;  // each one's weight (Add)
    size_t next = 0;                     // where the next one goes
    // The rest are kept current on every Observe.
    int64_t median = 0;           // of the latest `window` of `recent`
    std::vector<int64_t> sorted;  // all of `recent`, ascending
    std::vector<double> weights;  // of `sorted`'s entries, by recency
    // A job that has not run yet (most pending ones) asks for these, so they
    // are computed once per Observe, not once per job and cycle.
    std::optional<Duration> fresh_rank;            // GittinsRank at attained 0
    std::optional<Duration> fresh_mean_remaining;  // MeanRemainingSize at attained 0
  };
  static constexpr int kLevels = 8;
  // The windows a job's keys name, most specific first (each a const
  // Window*; null: no such key yet, or the job lacks what the level needs).
  using Windows = std::array<const void*, kLevels>;
  static_assert(std::tuple_size_v<decltype(EstimatorMemo::refs)> == kLevels);

  Windows WindowsOf(const JobSpec& spec) const;
  // `now`, where known, lets a burst's running members judge its finished
  // ones.
  Duration Predict(const JobSpec& spec, const Windows& windows, std::optional<Time> now) const;
  // The history answer, or 0 when no key has enough samples.
  int64_t FromHistory(const JobSpec& spec, const Windows& windows, std::optional<Time> now) const;
  // What the job's own estimate scales its class's sizes by (1 without
  // one): its blended prediction over the window's median.
  double EstimateScale(const Job& job, const Window& window, Time now) const;
  // The first window with enough samples, or null.
  const Window* Answering(const JobSpec& spec, const Windows& windows,
                          std::optional<Time> now) const;
  // Expected, judged at `now` where known.
  Duration ExpectedAt(const Job& job, std::optional<Time> now) const;
  // The rank and weight of a pending member of a burst not yet probed.
  std::optional<Duration> Probe(const Job& job, Time now) const;
  void Add(const std::string& key, int64_t micros);
  void Drop(const std::vector<BurstId>& gone);

  PredictorConfig config_;
  // Names this predictor in jobs' memos (EstimatorMemo::owner): unlike the
  // predictor's address, it cannot be reused while a memo refers to it.
  const std::shared_ptr<const void> token_ = std::make_shared<const int>(0);
  // unordered_map nodes do not move, so jobs' memos may point at them.
  std::unordered_map<std::string, Window> windows_;
  // Bumps whenever a key is seen for the first time or a burst's window is
  // dropped: a memo written before may miss a window, or point at a dropped
  // one, and is rebuilt.
  int64_t generation_ = 0;
  int64_t observations_ = 0;
  Bursts bursts_;
};

}  // namespace berth::core
