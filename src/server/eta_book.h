// EtaBook: the ETAs the server tells people, and how they turned out.
//
// Each full pass's plan (core::PlanEtas) gives a pending job a point ETA;
// the book turns it into what is shown (core::EstimateEta): the point and
// an 80% interval from the calibrator (core/eta_interval.h, the simulator's
// split conformal calibration), neither later than the start time limits
// guarantee where they bind. The first estimate a job is given is kept
// until its first start, when it is judged: the calibrator learns its
// error, so later intervals follow how the ETAs really err, and the
// server's own accuracy goes to /metrics:
//   berth_eta_error_seconds       histogram of start - first ETA (negative:
//                                 it started early)
//   berth_eta_judged_total        first starts of jobs that had an ETA
//   berth_eta_interval_hits_total those inside their first 80% interval
//   berth_eta_interval_coverage   hits / judged, since the server started
//   berth_eta_kept_total          first starts within a quarter of the wait
//                                 the first ETA promised, or 10 minutes
//                                 (core::EtaTolerance: the simulator's
//                                 eta_within_25pct)
//   berth_eta_within_25pct        kept / judged, since the server started
// Each judged first ETA is kept with its job (store::FirstEtaRecord, written
// at the first start): a restarted server's calibration learns the recent
// ones again (Learn) and goes on from where it was, rather than from the
// prior. It judges only ETAs it gave itself; the counts above are since it
// started.
//
// Not thread-safe: the controller's lock guards it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/decision.h"
#include "core/eta_interval.h"
#include "core/ids.h"
#include "core/paged_id_map.h"
#include "core/time.h"
#include "server/metrics.h"
#include "store/records.h"

namespace berth::server {

class EtaBook {
 public:
  // `metrics`, when given, gets the accuracy series (declared here).
  explicit EtaBook(Metrics* metrics, core::EtaCalibratorConfig config = {});

  // The estimate for a plan's `eta` given at `given_at` (the plan's time),
  // capped by `latest` (core::PlannedEta::latest). The job's first one is
  // kept for its judgement.
  // REQUIRES: given_at <= eta, given_at <= *latest.
  core::EtaEstimate Give(core::JobId job, core::Time given_at, core::Time eta,
                         std::optional<core::Time> latest);

  // What the job's record keeps at its first start at `started`: its first
  // estimate, if it was given one.
  std::optional<store::FirstEtaRecord> FirstEta(core::JobId job, core::Time started) const;

  // The job started at `started` for the first time: its first estimate,
  // if it had one, is judged. Later starts (after a preemption) are not.
  void Judge(core::JobId job, core::Time started);

  // First ETAs judged before this server started, read back from their
  // jobs: the calibration learns the most recent (its window) as it did
  // then, in the order of their starts. The accuracy counts, since this
  // server started, do not include them.
  void Learn(std::vector<store::FirstEtaRecord> judged);

  // The job ended: nothing of it is kept.
  void Forget(core::JobId job) { given_.erase(job); }

  struct Accuracy {
    int64_t judged = 0;   // first starts of jobs that had an ETA
    int64_t covered = 0;  // of them, inside the first 80% interval
    int64_t kept = 0;     // of them, within core::EtaTolerance of the first ETA
    // The judged ETAs the calibration reads now (its window), those learned
    // from before a restart included.
    int64_t calibrated_on = 0;
  };
  Accuracy accuracy() const;

 private:
  struct Given {
    core::EtaEstimate first;  // as shown
    core::Time given_at;
    core::Time planned;  // the plan's own ETA, which the calibrator widens
    bool judged = false;
  };

  Metrics* metrics_;
  core::EtaCalibrator calibrator_;
  core::PagedIdMap<Given> given_;
  Accuracy accuracy_;
};

// A pending job's view as people are shown it at `now`: its ETA and
// interval never in the past (core::AsOf). A passed ETA stays so only
// until the next full pass, which a passed ETA brings forward.
inline core::PendingJob ShownAt(core::PendingJob pending, core::Time now) {
  if (!pending.eta) return pending;
  const core::EtaInterval interval =
      pending.eta_interval.value_or(core::EtaInterval{*pending.eta, *pending.eta});
  const core::EtaEstimate shown = core::AsOf(core::EtaEstimate{*pending.eta, interval}, now);
  pending.eta = shown.expected;
  if (pending.eta_interval) pending.eta_interval = shown.interval;
  return pending;
}

}  // namespace berth::server
