#include "core/runtime_predictor.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <tuple>
#include <vector>

#include "common/check.h"
#include "core/gittins.h"

namespace berth::core {
namespace {

std::string BurstKey(BurstId burst) { return "b|" + std::to_string(burst); }

// The key of `spec` at `level` (0 = most specific), or "" when the job lacks
// what that level needs. Level 0 is a named job's name and GPUs, or an
// unnamed one's burst.
std::string KeyAt(const JobSpec& spec, int level, std::optional<BurstId> burst) {
  const std::string gpus = std::to_string(spec.total_gpu().value());
  const bool user = !spec.user.empty();
  const bool name = user && !spec.name.empty();
  switch (level) {
    case 0:
      if (name) return "ung|" + spec.user + '|' + spec.name + '|' + gpus;
      return burst ? BurstKey(*burst) : "";
    case 1:
      return name ? "un|" + spec.user + '|' + spec.name : "";
    case 2:
      return user ? "ug|" + spec.user + '|' + gpus : "";
    case 3:
      return user ? "u|" + spec.user : "";
    case 4:
      return "qg|" + spec.queue + '|' + gpus;
    case 5:
      return "q|" + spec.queue;
    case 6:
      return "g|" + gpus;
    default:
      return "*";
  }
}

// `d` times (Scaled) or over (Unscaled) `scale`, to the microsecond.
Duration Scaled(Duration d, double scale) {
  return Duration::Micros(std::llround(static_cast<double>(d.micros()) * scale));
}
Duration Unscaled(Duration d, double scale) {
  return Duration::Micros(std::llround(static_cast<double>(d.micros()) / scale));
}

// `remaining` for a job that ran `ran`, capped by what its time limit
// leaves: the agent stops it there.
Duration WithinLimit(const JobSpec& spec, Duration ran, Duration remaining) {
  if (!spec.time_limit) return remaining;
  return Min(remaining, Max(Duration::Zero(), *spec.time_limit - ran));
}

}  // namespace

RuntimePredictor::RuntimePredictor(PredictorConfig config)
    : config_(config), bursts_(config.bursts) {
  BERTH_CHECK(config_.window >= 1 && config_.min_samples >= 1 &&
              config_.min_samples <= config_.window && config_.history >= config_.window &&
              config_.half_life >= 1 && config_.probe >= Duration::Zero());
}

void RuntimePredictor::Submitted(const JobSpec& spec) { Drop(bursts_.Submitted(spec)); }

void RuntimePredictor::Started(JobId job, Time now) { bursts_.Started(job, now); }

void RuntimePredictor::Forget(JobId job) { Drop(bursts_.Ended(job)); }

void RuntimePredictor::Drop(const std::vector<BurstId>& gone) {
  for (BurstId burst : gone) {
    if (windows_.erase(BurstKey(burst)) > 0) ++generation_;
  }
}

void RuntimePredictor::Add(const std::string& key, int64_t micros) {
  auto [it, inserted] = windows_.try_emplace(key);
  if (inserted) ++generation_;
  Window& window = it->second;

  // Weights only ever enter as ratios (a rank and a mean are the same with
  // every weight doubled), so a run time's weight is fixed when it arrives,
  // 2^(1 / half_life) times the one before it, and nothing is reweighed.
  // Rebased long before a double would overflow; the oldest may fall to 0.
  constexpr double kRebaseAbove = 0x1p64;
  const size_t kept = window.recent.size();
  double weight = kept == 0 ? 1.0
                            : window.recent_weights[(window.next + kept - 1) % kept] *
                                  std::exp2(1.0 / config_.half_life);
  if (weight > kRebaseAbove) {
    for (double& each : window.recent_weights) each /= kRebaseAbove;
    for (double& each : window.weights) each /= kRebaseAbove;
    weight /= kRebaseAbove;
  }
  if (kept < static_cast<size_t>(config_.history)) {
    window.recent.push_back(micros);
    window.recent_weights.push_back(weight);
  } else {
    // The oldest leaves the sorted sample: its (size, weight) is unique, as
    // each weight is.
    const int64_t old = window.recent[window.next];
    const double old_weight = window.recent_weights[window.next];
    auto at = std::lower_bound(window.sorted.begin(), window.sorted.end(), old);
    while (window.weights[static_cast<size_t>(at - window.sorted.begin())] != old_weight) ++at;
    window.weights.erase(window.weights.begin() + (at - window.sorted.begin()));
    window.sorted.erase(at);
    window.recent[window.next] = micros;
    window.recent_weights[window.next] = weight;
  }
  window.next = (window.next + 1) % static_cast<size_t>(config_.history);
  const auto at = std::upper_bound(window.sorted.begin(), window.sorted.end(), micros);
  window.weights.insert(window.weights.begin() + (at - window.sorted.begin()), weight);
  window.sorted.insert(at, micros);

  // The median of the latest `window` run times.
  const size_t n = window.recent.size();
  const size_t latest = std::min(n, static_cast<size_t>(config_.window));
  std::vector<int64_t> median_of(latest);
  for (size_t age = 0; age < latest; ++age) {
    median_of[age] = window.recent[(window.next + n - 1 - age) % n];
  }
  std::nth_element(median_of.begin(), median_of.begin() + static_cast<std::ptrdiff_t>(latest / 2),
                   median_of.end());
  window.median = median_of[latest / 2];

  window.fresh_rank = GittinsRank(window.sorted, window.weights, Duration::Zero());
  window.fresh_mean_remaining = MeanRemainingSize(window.sorted, window.weights, Duration::Zero());
}

void RuntimePredictor::Observe(const JobSpec& spec, Duration run_time) {
  const int64_t micros = std::max<int64_t>(run_time.micros(), 0);
  const std::optional<BurstId> burst = bursts_.Of(spec.id);
  for (int level = 0; level < kLevels; ++level) {
    const std::string key = KeyAt(spec, level, burst);
    if (!key.empty()) Add(key, micros);
  }
  ++observations_;
  Drop(bursts_.Ended(spec.id));
}

RuntimePredictor::Windows RuntimePredictor::WindowsOf(const JobSpec& spec) const {
  Windows windows{};
  const std::optional<BurstId> burst = bursts_.Of(spec.id);
  for (int level = 0; level < kLevels; ++level) {
    const std::string key = KeyAt(spec, level, burst);
    auto it = key.empty() ? windows_.end() : windows_.find(key);
    if (it != windows_.end()) windows[static_cast<size_t>(level)] = &it->second;
  }
  return windows;
}

const RuntimePredictor::Window* RuntimePredictor::Answering(const JobSpec& spec,
                                                            const Windows& windows,
                                                            std::optional<Time> now) const {
  // A burst answers from its first finished member, unless a member still
  // running has outrun every finished one: then they were its quick ends.
  if (const auto* burst = static_cast<const Window*>(windows[0]);
      burst != nullptr && spec.name.empty() && !burst->sorted.empty()) {
    const std::optional<BurstId> id = bursts_.Of(spec.id);
    const bool outrun =
        id && now && bursts_.LongestRunning(*id, *now).micros() > burst->sorted.back();
    if (!outrun) return burst;
  }
  for (size_t level = spec.name.empty() ? 1 : 0; level < windows.size(); ++level) {
    const auto* window = static_cast<const Window*>(windows[level]);
    if (window != nullptr && window->recent.size() >= static_cast<size_t>(config_.min_samples)) {
      return window;
    }
  }
  return nullptr;
}

int64_t RuntimePredictor::FromHistory(const JobSpec& spec, const Windows& windows,
                                      std::optional<Time> now) const {
  const Window* window = Answering(spec, windows, now);
  return window != nullptr ? std::max<int64_t>(window->median, 1) : 0;
}

Duration RuntimePredictor::Predict(const JobSpec& spec, const Windows& windows,
                                   std::optional<Time> now) const {
  const int64_t history = FromHistory(spec, windows, now);
  int64_t prediction = history > 0 ? history : config_.cold_start.micros();
  if (spec.estimate && spec.estimate->micros() > 0) {
    const int64_t estimate = spec.estimate->micros();
    prediction = history > 0 ? static_cast<int64_t>(std::llround(std::sqrt(
                                   static_cast<double>(history) * static_cast<double>(estimate))))
                             : estimate;
  }
  if (spec.time_limit) prediction = std::min(prediction, spec.time_limit->micros());
  return Duration::Micros(prediction);
}

Duration RuntimePredictor::Expected(const Job& job) const { return ExpectedAt(job, std::nullopt); }

Duration RuntimePredictor::ExpectedAt(const Job& job, std::optional<Time> now) const {
  EstimatorMemo& memo = job.estimator_memo;
  // Same owner, compared without touching reference counts.
  const bool mine = !memo.owner.owner_before(token_) && !token_.owner_before(memo.owner);
  if (!mine || memo.generation != generation_) {
    memo.refs = WindowsOf(job.spec);
    memo.owner = token_;
    memo.generation = generation_;
  }
  return Predict(job.spec, memo.refs, now);
}

std::optional<Duration> RuntimePredictor::Probe(const Job& job, Time now) const {
  if (config_.probe == Duration::Zero() || job.RunTime(now) > Duration::Zero()) return std::nullopt;
  const std::optional<BurstId> burst = bursts_.Of(job.spec.id);
  if (!burst || bursts_.Probed(*burst)) return std::nullopt;
  return job.spec.time_limit ? Min(config_.probe, *job.spec.time_limit) : config_.probe;
}

Duration RuntimePredictor::Remaining(const Job& job, Time now) const {
  const Duration predicted = ExpectedAt(job, now);
  const Duration ran = job.RunTime(now);
  const Duration remaining =
      predicted > ran ? predicted - ran : ran;  // proved wrong: as long again
  return WithinLimit(job.spec, ran, remaining);
}

double RuntimePredictor::EstimateScale(const Job& job, const Window& window, Time now) const {
  // The user's own estimate sharpens the class's distribution: scaled so
  // that its median is the blended prediction (Predict).
  if (!job.spec.estimate || job.spec.estimate->micros() <= 0) return 1.0;
  return static_cast<double>(Predict(job.spec, job.estimator_memo.refs, now).micros()) /
         static_cast<double>(std::max<int64_t>(window.median, 1));
}

Duration RuntimePredictor::Rank(const Job& job, Time now) const {
  if (const std::optional<Duration> probe = Probe(job, now)) return *probe;
  Expected(job);  // brings the job's memo up to date
  const Window* window = Answering(job.spec, job.estimator_memo.refs, now);
  const Duration ran = job.RunTime(now);
  std::optional<Duration> rank;
  if (window != nullptr) {
    // Ranks scale with the distribution (the index of a distribution scaled
    // by s at attained a is s times its index at a / s).
    const double scale = EstimateScale(job, *window, now);
    rank = ran == Duration::Zero()
               ? window->fresh_rank
               : GittinsRank(window->sorted, window->weights, Unscaled(ran, scale));
    if (rank) rank = Scaled(*rank, scale);
  }
  if (!rank) return Remaining(job, now);
  return WithinLimit(job.spec, ran, *rank);
}

Duration RuntimePredictor::MeanRemaining(const Job& job, Time now) const {
  if (const std::optional<Duration> probe = Probe(job, now)) return *probe;
  return KnownMeanRemaining(job, now);
}

Duration RuntimePredictor::KnownMeanRemaining(const Job& job, Time now) const {
  Expected(job);  // brings the job's memo up to date
  const Window* window = Answering(job.spec, job.estimator_memo.refs, now);
  if (window == nullptr) return Remaining(job, now);
  const Duration ran = job.RunTime(now);
  std::optional<Duration> mean = ran == Duration::Zero()
                                     ? window->fresh_mean_remaining
                                     : MeanRemainingSize(window->sorted, window->weights, ran);
  if (!mean) return Remaining(job, now);
  return WithinLimit(job.spec, ran, *mean);
}

std::vector<Duration> RuntimePredictor::RemainingQuantiles(const Job& job, Time now,
                                                           int32_t count) const {
  Expected(job);  // brings the job's memo up to date
  const Window* window = Answering(job.spec, job.estimator_memo.refs, now);
  if (window == nullptr) return {};
  const double scale = EstimateScale(job, *window, now);
  const Duration ran = job.RunTime(now);
  std::vector<Duration> quantiles =
      RemainingSizeQuantiles(window->sorted, window->weights, Unscaled(ran, scale), count);
  for (Duration& quantile : quantiles)
    quantile = WithinLimit(job.spec, ran, Scaled(quantile, scale));
  return quantiles;
}

}  // namespace berth::core
