// The ETA people are told, and an 80% interval around it, calibrated on how
// the plan's ETAs turned out (split conformal prediction over the plan's
// own errors).
//
// The plan (eta.h) replays the discipline as running work ends (the
// median of a few replays over run times' quantiles, where the estimator
// knows them); it knows nothing of preemption, later arrivals that rank
// ahead, or how wrong the learned run times are. Rather than model each,
// the calibrator keeps the errors of the most recent planned ETAs whose jobs
// have started, each relative to the wait the plan promised,
//   error = (start - eta) / max(eta - given_at, min_scale),
// and answers a new plan's ETA with
// - the interval between the errors' 10th and 90th percentiles scaled by
//   its own promised wait: if the recent past is like the near future, 80%
//   of starts fall inside. Where it is not (the errors drift with the
//   load), each judged interval moves the two percentiles (adaptive
//   conformal inference): a miss widens, a hit narrows, and the share held
//   returns to 80%. Starts before the ETA was given are impossible, so the
//   interval never begins before `given_at`;
// - the point most likely to be right by the rule ETAs are judged by (within
//   a quarter of the wait it promises, or 10 minutes: EtaTolerance): the
//   plan's wait times the factor k that would have made the most of the
//   recent ETAs right (at the median of those starts; below 10 minutes,
//   the plan's wait plus 10 minutes x (k - 1), as the interval scales its
//   errors), each recent ETA weighed by how near its promised wait is to
//   this one's (point_bandwidth): an hour's promise and a two-day one do
//   not err alike. Where the plan is right, k is 1; where preemptions by
//   newcomers start most jobs within minutes of an hours-long plan (ITP
//   cluster02), k is near 0 and the 10 minutes' tolerance holds them all.
//   A mean or median of the errors would land between two clusters of
//   them, near neither.
// Until enough ETAs have been judged it answers the plan's own ETA and a
// wide prior, [given_at, eta + promised wait].
//
// Pure and deterministic: the owner reports each judged ETA with Observe
// (the simulator at a job's first start); nothing else changes it. Not
// thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "core/time.h"

namespace berth::core {

// How far from its ETA a start may fall with the ETA still right: a quarter
// of the wait it promised, or 10 minutes for short promises. The
// simulator's eta_within_25pct and the calibrator's point both judge by it.
Duration EtaTolerance(Duration promised_wait);
// Whether an ETA of `eta`, given at `given_at`, was right for a start at
// `started`. REQUIRES: eta >= given_at.
bool EtaKept(Time given_at, Time eta, Time started);

// The promised waits a start after `waited` proves right by EtaTolerance:
// one interval, [low, high].
struct PromisedWaits {
  Duration low;
  Duration high;
};
PromisedWaits PromisesKeptBy(Duration waited);

struct EtaInterval {
  Time low;
  Time high;
  bool Contains(Time at) const { return low <= at && at <= high; }
  bool operator==(const EtaInterval&) const = default;
};

struct EtaCalibratorConfig {
  int32_t window = 2000;     // most recent judged ETAs kept
  int32_t min_samples = 50;  // fewer: the prior
  // The errors' scale for short promises: a promised wait of 10 s that
  // turns into 3 min is not an error of 18x.
  Duration min_scale = Duration::Minutes(10);
  double coverage = 0.8;  // the share of starts the interval aims to hold
  // How far each judged interval moves the tails (adaptive conformal
  // inference's step, Gibbs and Candes 2021): a miss widens the next
  // intervals, a hit narrows them, so that the share held stays near
  // `coverage` where the errors drift (a crowded cluster's waits change
  // with its load; the window of errors lags). 0: fixed tails. 0.002, not
  // the paper's 0.005: a start judges an interval given a wait earlier, and
  // larger steps overshot on that late feedback (docs/evaluation.md).
  double adapt_step = 0.002;
  // How near a judged ETA's promise must be to weigh in the point's factor
  // for a new one: a Gaussian kernel over the natural log of the promised
  // waits, this wide (2: a promise 7.4x longer or shorter weighs 0.61, 55x
  // weighs 0.14). Where short promises and long ones err differently (ITP
  // cluster02: starts within minutes of a short plan, hours-long plans
  // that run over), each gets its own factor; where they err alike it is
  // one factor, as with 0, which weighs every judged ETA the same. A promise
  // with under min_samples' worth of weight near it takes that one factor
  // too (few ETAs near it tell little: ITP cluster10 on one node).
  double point_bandwidth = 2.0;
};

class EtaCalibrator {
 public:
  explicit EtaCalibrator(EtaCalibratorConfig config = {});

  // An ETA given at `given_at` for `eta` was judged: the job started at
  // `started`; `given`, the interval told then, moves the tails once the
  // intervals come from judged errors. REQUIRES: eta >= given_at.
  void Observe(Time given_at, Time eta, Time started,
               std::optional<EtaInterval> given = std::nullopt);

  // The interval for an ETA given at `given_at` for `eta`.
  // REQUIRES: eta >= given_at.
  EtaInterval Interval(Time given_at, Time eta) const;
  // The point to tell for the plan's `eta` given at `given_at`.
  // REQUIRES: eta >= given_at.
  Time Expected(Time given_at, Time eta) const;

  const EtaCalibratorConfig& config() const { return config_; }
  int64_t observations() const { return observations_; }
  // The judged ETAs the point and the interval come from: the window.
  int64_t calibrated_on() const { return static_cast<int64_t>(judged_.size()); }

 private:
  // A judged ETA: the wait its plan promised and the wait it took.
  struct Judged {
    Duration promised;
    Duration waited;
  };
  Duration Scale(Duration promised_wait) const;
  double RelativeError(const Judged& judged) const;
  // Nearest rank over the window.
  double Quantile(double q) const;
  // The factor k of Expected for a promise of `promised_wait`, over the
  // window.
  double LikeliestFactor(Duration promised_wait) const;

  EtaCalibratorConfig config_;
  // The share of starts the tails leave out, both together: 1 - coverage,
  // moved by each judged interval (Observe), within [0, 1].
  double miscoverage_;
  std::vector<Judged> judged_;  // a ring
  size_t next_ = 0;
  std::vector<double> sorted_;  // their relative errors in ascending order
  // LikeliestFactor by band of promises, until the window changes.
  mutable std::map<int64_t, double> factors_;
  int64_t observations_ = 0;
};

// A pending job's ETA as people are told it: the expected start and the
// interval that should hold 80% of starts.
struct EtaEstimate {
  Time expected;
  EtaInterval interval;
  bool operator==(const EtaEstimate&) const = default;
};

// The estimate for the plan's `eta` given at `given_at`: the calibrator's
// point and interval for it, and, where time limits bind (`latest`, the start they
// guarantee: PlannedEta::latest), neither the point nor the interval later
// than that. REQUIRES: given_at <= eta, and given_at <= *latest.
EtaEstimate EstimateEta(const EtaCalibrator& calibrator, Time given_at, Time eta,
                        std::optional<Time> latest);

// The estimate as shown at `now`: never in the past. A start expected
// before now, for a job still waiting, is expected now at the earliest
// until a new plan replaces it; so is each end of its interval.
EtaEstimate AsOf(const EtaEstimate& estimate, Time now);

}  // namespace berth::core
