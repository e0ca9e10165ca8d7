// Jobs that arrive in bursts, and what a burst's first runs say about the
// rest of it.
//
// People and their scripts submit in bursts: a sweep, an array resubmitted
// by hand, a retry loop. Jobs of one user, queue and GPU count submitted
// within `gap` of the burst's previous one run far more alike than their
// class does (ITP cluster09: after a burst-mate that ran under 30 min, 59%
// ran under 30 min; after a longer one, 4%). A job with a name is not
// grouped: its name already is a class (runtime_predictor.h).
//
// What a burst knows, for the predictor (docs/evaluation.md):
// - whether any member has started: until one has, nothing is known of it,
//   so its pending members are worth probing (one started early teaches
//   the rest; Gittins with what a run teaches about its burst-mates
//   counted);
// - how long its running members have run: its finished members speak for
//   the rest only while no running member has outrun them, as the first to
//   finish are often its crashes.
//
// Memory stays bounded: a burst is forgotten once it is closed (a later
// submission of its key started a new one) and none of its members is
// left. Pure and deterministic; not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/ids.h"
#include "core/job.h"
#include "core/time.h"

namespace berth::core {

using BurstId = int64_t;

struct BurstConfig {
  // The longest pause between two submissions of one burst; zero: no
  // bursts.
  Duration gap = Duration::Minutes(5);
};

class Bursts {
 public:
  explicit Bursts(BurstConfig config = {});

  // A job was submitted; calls come in submit order (a job already known,
  // submitted again after a requeue, changes nothing; one submitted more
  // than `gap` before the latest burst of its kind joins no burst). Returns the bursts
  // forgotten by it (a burst it closed that had no member left).
  std::vector<BurstId> Submitted(const JobSpec& spec);
  // A member's first start (later starts after a preemption change nothing).
  void Started(JobId job, Time now);
  // A member is gone (finished, failed or cancelled). Returns the bursts
  // forgotten by it, whose state the caller may drop.
  std::vector<BurstId> Ended(JobId job);

  std::optional<BurstId> Of(JobId job) const;
  // Whether a member of `burst` has started.
  bool Probed(BurstId burst) const;
  // How long its longest-running live member has run since its first start
  // (zero: none running).
  Duration LongestRunning(BurstId burst, Time now) const;

  size_t size() const { return bursts_.size(); }  // bursts remembered

 private:
  struct Burst {
    int64_t live = 0;  // members submitted and not ended
    bool open = true;  // the latest burst of its key
    bool probed = false;
    std::map<JobId, Time> running_since;  // live members that have started
  };
  struct Open {
    BurstId burst = 0;
    Time last_submit;
  };

  // Forgets `burst` if it is closed and empty; appends it to `gone`.
  void MaybeForget(BurstId burst, std::vector<BurstId>& gone);

  BurstConfig config_;
  BurstId next_ = 0;
  std::unordered_map<std::string, Open> open_;  // key: user, queue and GPUs
  std::unordered_map<BurstId, Burst> bursts_;
  std::unordered_map<JobId, BurstId> member_of_;
};

}  // namespace berth::core
