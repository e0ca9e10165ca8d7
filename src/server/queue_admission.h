// A submission meets its queue's rules (issue 27, item 4): the checks a job
// gets before it is queued, so that a request no queue rule could ever let
// run is refused at once, naming the rule, instead of waiting forever.
//
// For the job's queue and every ancestor (a child narrows its parent's
// rules, never widens them), in this order:
//   1. who may submit: `allow_users` or `allow_groups` (the submitter's Unix
//      groups) lists the user; both empty let everyone in.
//   2. `max_priority`: the highest priority the job may ask for.
//   3. `max_time`: the longest time limit. A job without one gets the
//      smallest `max_time` on its path as its limit (Slurm's partition
//      DefaultTime = MaxTime), so backfill can plan with it; an estimate
//      over the limit it gets is refused like a limit over it.
//   4. `max_gpus_per_user`: a job asking more GPUs than its user may ever
//      have running in the queue could never start.
// Admins pass 1 and 2 (the "admins unlimited": operators test any
// queue and may jump any line); 3 and 4 hold for everyone, as the per-user
// running limits do in the core: they are what the queue promises to the
// others in it.
//
// A job whose tasks ask no memory gets its queue's default memory
// (`default_memory_per_gpu_mib`, `default_memory_per_cpu_mib`;
// core/default_memory.h), before the rules, so that its record shows it;
// moved to another queue later (scontrol update), it keeps that memory.
//
// A job naming no queue goes to the tree's default queue when one is marked
// (`default = true`), so its rules apply; otherwise to the ungoverned
// default queue, as before queues had rules.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "core/quota.h"
#include "store/records.h"

namespace berth::server {

// Who submits, as the rules see them. Their Unix groups are looked up once,
// and only when a rule needs them (the lookup may block on NSS, so the
// owner may call groups() ahead, outside its lock).
class Submitter {
 public:
  using GroupLookup = std::function<std::vector<std::string>(const std::string& user)>;
  Submitter(std::string user, bool admin, GroupLookup lookup)
      : user_(std::move(user)), admin_(admin), lookup_(std::move(lookup)) {}

  const std::string& user() const { return user_; }
  bool admin() const { return admin_; }
  const std::vector<std::string>& groups() {
    if (!groups_) groups_ = lookup_ ? lookup_(user_) : std::vector<std::string>{};
    return *groups_;
  }

 private:
  std::string user_;
  bool admin_;
  GroupLookup lookup_;
  std::optional<std::vector<std::string>> groups_;
};

// Whether any queue admits by Unix group (a submitter's groups may be needed).
bool AdmitsByGroup(const core::QuotaTree& tree);

// Puts the request in its queue (the default one when it names none) and
// checks the rules above; may set its time limit and its memory. InvalidArgument for a
// queue the tree does not name; PermissionDenied naming the rule and the
// queue that sets it ("priority 900 is over queue vision's max_priority 100").
Status AdmitToQueue(const core::QuotaTree& tree, Submitter& who, store::JobRequest& request);

}  // namespace berth::server
