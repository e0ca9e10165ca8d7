#include "server/eta_book.h"

#include <algorithm>

namespace berth::server {

EtaBook::EtaBook(Metrics* metrics, core::EtaCalibratorConfig config)
    : metrics_(metrics), calibrator_(config) {
  if (metrics_ == nullptr) return;
  // Both signs: early starts (backfill, jobs ahead ending sooner) are as
  // much an error as late ones.
  metrics_->DeclareHistogram(
      "berth_eta_error_seconds",
      "Actual start minus the first ETA a job was given, in seconds (negative: it started early).",
      {-86400, -21600, -3600, -900, -300, -60, -10, 0, 10, 60, 300, 900, 3600, 21600, 86400});
  metrics_->DeclareCounter("berth_eta_judged_total",
                           "First starts of jobs that had been given an ETA.");
  metrics_->DeclareCounter("berth_eta_interval_hits_total",
                           "First starts that fell inside the first 80% interval the job was "
                           "given.");
  metrics_->DeclareGauge("berth_eta_interval_coverage",
                         "Share of first starts inside the first 80% interval given (aim: 0.8), "
                         "since the server started.");
  metrics_->DeclareCounter("berth_eta_kept_total",
                           "First starts within a quarter of the wait the first ETA promised, or "
                           "10 minutes.");
  metrics_->DeclareGauge("berth_eta_within_25pct",
                         "Share of first starts within a quarter of the wait the first ETA "
                         "promised, or 10 minutes (the simulator's eta_within_25pct), since the "
                         "server started.");
  // Series from the start, so that no judgement yet reads as 0, not as absent.
  metrics_->Increment("berth_eta_judged_total", {}, 0);
  metrics_->Increment("berth_eta_interval_hits_total", {}, 0);
  metrics_->Increment("berth_eta_kept_total", {}, 0);
}

core::EtaEstimate EtaBook::Give(core::JobId job, core::Time given_at, core::Time eta,
                                std::optional<core::Time> latest) {
  const core::EtaEstimate estimate = core::EstimateEta(calibrator_, given_at, eta, latest);
  if (given_.find(job) == nullptr) given_[job] = Given{estimate, given_at, eta};
  return estimate;
}

std::optional<store::FirstEtaRecord> EtaBook::FirstEta(core::JobId job, core::Time started) const {
  const Given* given = given_.find(job);
  if (given == nullptr) return std::nullopt;
  return store::FirstEtaRecord{given->given_at,
                               given->planned,
                               given->first.expected,
                               given->first.interval.low,
                               given->first.interval.high,
                               started};
}

void EtaBook::Learn(std::vector<store::FirstEtaRecord> judged) {
  std::sort(judged.begin(), judged.end(),
            [](const store::FirstEtaRecord& a, const store::FirstEtaRecord& b) {
              return a.started < b.started;
            });
  // Only the window is read; what falls out of it before now moved the
  // interval's tails a little, no more (adapt_step).
  const size_t window = static_cast<size_t>(calibrator_.config().window);
  const size_t first = judged.size() > window ? judged.size() - window : 0;
  for (size_t i = first; i < judged.size(); ++i) {
    calibrator_.Observe(judged[i].given_at, judged[i].planned, judged[i].started,
                        core::EtaInterval{judged[i].low, judged[i].high});
  }
}

EtaBook::Accuracy EtaBook::accuracy() const {
  Accuracy accuracy = accuracy_;
  accuracy.calibrated_on = calibrator_.calibrated_on();
  return accuracy;
}

void EtaBook::Judge(core::JobId job, core::Time started) {
  Given* given = given_.find(job);
  if (given == nullptr || given->judged) return;
  given->judged = true;
  // The calibrator learns the plan's own error: it widens the plan's ETA.
  calibrator_.Observe(given->given_at, given->planned, started, given->first.interval);
  const bool covered = given->first.interval.Contains(started);
  const bool kept = core::EtaKept(given->given_at, given->first.expected, started);
  ++accuracy_.judged;
  accuracy_.covered += covered ? 1 : 0;
  accuracy_.kept += kept ? 1 : 0;
  if (metrics_ == nullptr) return;
  metrics_->Observe("berth_eta_error_seconds", {}, (started - given->first.expected).seconds());
  metrics_->Increment("berth_eta_judged_total", {});
  if (covered) metrics_->Increment("berth_eta_interval_hits_total", {});
  if (kept) metrics_->Increment("berth_eta_kept_total", {});
  const auto judged = static_cast<double>(accuracy_.judged);
  metrics_->SetGauge("berth_eta_interval_coverage",
                     {{{}, static_cast<double>(accuracy_.covered) / judged}});
  metrics_->SetGauge("berth_eta_within_25pct",
                     {{{}, static_cast<double>(accuracy_.kept) / judged}});
}

}  // namespace berth::server
