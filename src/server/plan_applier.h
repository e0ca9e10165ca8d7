// The plan applier: how one cycle's core::Decision reaches the control
// plane. Nomad's plan-apply shape: the scheduler proposes a plan from the
// state it read, and one applier re-checks it against the latest state and
// commits what still holds.
//
//   core::Decision --Check--> Plan: the jobs' next records, by id
//     --queue the write--> store (before anything changes in memory)
//     --Commit each record--> live records, placement index, job events,
//                             queue-wait metrics, agent wakes
//     --core--> ClusterState: victims stopping, starts placed
//
// Check, against the controller's records as they are now:
//   1. A preemption of a job that is gone or already stopping is dropped.
//      Any other victim's next record is `completing` (reason preempted).
//   2. A start that needs victims is left for a later cycle: they hold
//      their GPUs through their grace period, and the job starts once they
//      have exited.
//   3. Any other start's next record is `starting` on its placement, with
//      one more attempt.
// The records are queued for the store, with the usage of the runs that
// ended since the last write, before memory or the core change, so that the
// store receives changes in the order memory made them; the caller waits
// for the write outside the lock (docs/architecture.md, "Writes and the
// controller's lock").
//
// Thread safety: REQUIRES the controller's mutex held from construction to
// the end of Apply. One applier per cycle.
#pragma once

#include <future>
#include <map>
#include <vector>

#include "common/status.h"
#include "core/decision.h"
#include "core/ids.h"
#include "core/time.h"
#include "server/controller.h"
#include "store/records.h"

namespace berth::server {

class Controller::PlanApplier {
 public:
  struct Applied {
    // The write of the plan's records; not valid when nothing was written.
    std::shared_future<Status> durable;
    bool changed = false;              // a job started or is being preempted
    std::vector<core::JobId> started;  // in the decision's order
  };

  // `now`: the cycle's time, the start time of the jobs it starts.
  PlanApplier(Controller& controller, core::Time now) : controller_(controller), now_(now) {}

  Applied Apply(const core::Decision& decision);

 private:
  // What of a decision still holds.
  struct Plan {
    std::map<core::JobId, store::JobRecord> records;  // next records, written in id order
    std::vector<const core::JobStart*> starts;        // in the decision's order
  };

  Plan Check(const core::Decision& decision) const;
  store::JobRecord Stopping(const store::JobRecord& job, const core::Preemption& preemption) const;
  store::JobRecord Starting(const store::JobRecord& job, const core::JobStart& start) const;
  std::vector<store::TaskPlacementRecord> RecordPlacement(const core::Placement& placement) const;
  // The next record replaces the live one, with what follows from it: its
  // event, the queue wait of a first start, the placement index and a wake
  // for its agents (a task to start, or one to stop).
  void Commit(store::JobRecord job);
  void LogChange(const store::JobRecord& job) const;
  void ObserveFirstStart(const store::JobRecord& job);

  Controller& controller_;
  const core::Time now_;
};

}  // namespace berth::server
