// What a policy believes about how long jobs run.
//
// Policies never read a job's true duration directly: they ask an estimator.
// The user-limit estimator uses what the user declared; the simulator plugs
// in an oracle for the reference policies that are allowed to read the
// future (sjf-oracle, srtf-oracle), and the Berth policy a predictor learned
// from finished jobs.
#pragma once

#include "core/job.h"
#include "core/time.h"

namespace berth::core {

class RuntimeEstimator {
 public:
  virtual ~RuntimeEstimator() = default;
  // Expected run time of the whole job, from start to end, without restarts.
  virtual Duration Expected(const Job& job) const = 0;
  // Expected run time still ahead at `now`; never negative. The default
  // subtracts what the job has run so far.
  virtual Duration Remaining(const Job& job, Time now) const;
  // The size a shortest-first order ranks the job by at `now`: by default
  // its expected remaining time; an estimator that knows the distribution
  // of sizes like the job's answers its Gittins rank (gittins.h).
  virtual Duration Rank(const Job& job, Time now) const { return Remaining(job, now); }
  // The mean run time still ahead at `now`: over the sizes of jobs like it
  // that outlast what it has run, for an estimator that knows them; by
  // default its expected remaining time.
  virtual Duration MeanRemaining(const Job& job, Time now) const { return Remaining(job, now); }
  // The same, without what ranking the job early is worth: an estimator
  // that probes (runtime_predictor.h) answers MeanRemaining with a probe's
  // quantum, and this with what is known of the job's size.
  virtual Duration KnownMeanRemaining(const Job& job, Time now) const {
    return MeanRemaining(job, now);
  }
  // The run time still ahead at `now` at `count` evenly spread quantiles of
  // what the estimator knows of sizes like the job's ((i + 0.5) / count,
  // ascending), for the ETA plan's replays (eta.h). Empty where it knows no
  // distribution: then Remaining is all it knows. REQUIRES: count >= 1.
  virtual std::vector<Duration> RemainingQuantiles(const Job& /*job*/, Time /*now*/,
                                                   int32_t /*count*/) const {
    return {};
  }
};

// The user's estimate when given, else the time limit, else a default limit
// (a partition maximum, as when users leave Slurm's --time at its default).
class UserLimitEstimator final : public RuntimeEstimator {
 public:
  explicit UserLimitEstimator(Duration default_limit) : default_limit_(default_limit) {}
  Duration Expected(const Job& job) const override;

 private:
  Duration default_limit_;
};

// The time limit, else the default limit: what Slurm's backfill plans with.
class TimeLimitEstimator final : public RuntimeEstimator {
 public:
  explicit TimeLimitEstimator(Duration default_limit) : default_limit_(default_limit) {}
  Duration Expected(const Job& job) const override;

 private:
  Duration default_limit_;
};

}  // namespace berth::core
