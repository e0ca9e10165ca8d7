// Runtime prediction from history: how long will this job run, judged only
// from jobs that have already finished.
//
// The predictor keeps, per key, the run times of the most recent finished
// jobs and answers with their median. Keys go from specific to general, and
// a job is answered by the first key with enough history:
//   user + name + GPUs, user + name, user + GPUs, user,
//   queue + GPUs, queue, GPUs, everyone.
// Traces without users or names (Philly, ITP) simply start at the queue.
//
// The user's own words are blended in: an estimate counts as much as the
// history (geometric mean) or stands alone without history, and a time limit
// caps every prediction (the job is stopped there).
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
#include <string>
#include <unordered_map>
#include <vector>

#include "core/job.h"
#include "core/paged_id_map.h"
#include "core/runtime_estimator.h"

namespace berth::core {

struct PredictorConfig {
  int32_t min_samples = 3;  // a key answers only with this many finished jobs
  int32_t window = 25;      // recent run times kept per key
  // The answer before anything has finished (and no estimate or limit).
  Duration cold_start = Duration::Hours(1);
};

class RuntimePredictor final : public RuntimeEstimator {
 public:
  explicit RuntimePredictor(PredictorConfig config = {});

  // Learns from a finished job. `run_time` is its real run time, without
  // time lost to restarts.
  void Observe(const JobSpec& spec, Duration run_time);

  // The predicted run time of the whole job.
  // REQUIRES: a job id always names the same job (as in a ClusterState):
  // answers are cached by id.
  Duration Predict(const JobSpec& spec) const;

  Duration Expected(const Job& job) const override { return Predict(job.spec); }
  Duration Remaining(const Job& job, Time now) const override;

  int64_t observations() const { return observations_; }

 private:
  struct Window {
    std::vector<int64_t> recent;  // ring of run times in microseconds
    size_t next = 0;
    int64_t median = 0;  // of `recent`, kept current on every Observe
  };
  static constexpr int kLevels = 8;
  // The windows a job's keys name, most specific first (null: no such key
  // yet, or the job lacks what the level needs), as of `generation`.
  struct Levels {
    std::array<const Window*, kLevels> windows{};
    int64_t generation = -1;
  };

  // The history answer, or 0 when no key has enough samples.
  int64_t FromHistory(const JobSpec& spec) const;
  const Levels& LevelsOf(const JobSpec& spec) const;
  void Add(const std::string& key, int64_t micros);

  PredictorConfig config_;
  // unordered_map nodes do not move, so Levels may point at them.
  std::unordered_map<std::string, Window> windows_;
  // Bumps whenever a key is seen for the first time: cached Levels may then
  // miss a window and are rebuilt.
  int64_t generation_ = 0;
  // A cache, not state: which windows answer each live job, so the
  // thousands of predictions per decision cycle build no key strings.
  // Entries leave when their job is observed; the cache is dropped whole if
  // it grows past a bound (jobs cancelled before finishing).
  mutable PagedIdMap<Levels> levels_;
  int64_t observations_ = 0;
};

}  // namespace berth::core
