// ClusterState: the snapshot that Decide reads.
//
// The owner (simulator or server scheduler loop) keeps one ClusterState up to
// date by applying events (nodes join or change, jobs arrive, start, finish,
// get preempted) and calls Decide on it between events. It holds only what
// scheduling needs: nodes and their free capacity, live jobs, decayed usage.
// Finished jobs leave it; their history belongs to the owner.
//
// Pure and deterministic: no I/O, no clock (every event carries its time).
// Not thread-safe: one owner applies events and decides in turn.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "core/capacity.h"
#include "core/decision.h"
#include "core/ids.h"
#include "core/job.h"
#include "core/job_index.h"
#include "core/node.h"
#include "core/node_table.h"
#include "core/quota.h"
#include "core/usage_ledger.h"

namespace berth::core {

struct ClusterOptions {
  // Fair-share usage decay (Slurm's PriorityDecayHalfLife); a cluster
  // setting because usage is accumulated as jobs run, before any policy reads it.
  Duration usage_half_life = Duration::Days(7);
};

// What an owner knew of a job's earlier runs before a ClusterState did (a
// restarted server reads it back): their time, and how often the job was
// stopped and queued again. Its wait, attained service and the protection
// its stops earned (Policy::min_run_growth) go on from there.
struct EarlierRuns {
  Duration executed;
  int32_t preemptions = 0;
};

class ClusterState {
 public:
  explicit ClusterState(ClusterOptions options = {});
  ClusterState(const ClusterState&) = delete;
  ClusterState& operator=(const ClusterState&) = delete;

  // --- nodes ---
  NodeId AddNode(NodeSpec spec);
  void SetNodeState(NodeId node, NodeState state);
  void SetGpuHealth(NodeId node, int gpu, GpuHealth health);
  NodeState node_state(NodeId node) const { return node_states_[Index(node)]; }
  // A node's labels, features or container runtime changed (its agent
  // registered again with others): later decisions match constraints
  // against the new ones, and work placed under the old ones keeps running.
  void SetNodeAttributes(NodeId node, std::map<std::string, std::string> labels,
                         std::set<std::string, std::less<>> features,
                         std::string container_runtime);

  // --- team queues ---
  // Replaces the queue tree (nullopt: no quotas).
  void SetQuotas(std::optional<QuotaTree> quotas) { quotas_ = std::move(quotas); }
  const QuotaTree* quotas() const { return quotas_ ? &*quotas_ : nullptr; }
  // --- fair-share shares ---
  // Each user's fair-share shares (Slurm's fairshare=N); users not named
  // have one. Queues' shares are in the queue tree.
  using UserShares = std::map<std::string, int64_t, std::less<>>;
  void SetUserShares(UserShares shares) { user_shares_ = std::move(shares); }
  const UserShares& user_shares() const { return user_shares_; }

  const NodeTable& nodes() const { return nodes_; }
  const Capacity& capacity() const { return capacity_; }

  // --- usage history ---
  // A run that ended before this state knew of it (a restarted owner reads
  // its history back): charged to fair share as if it had run here.
  void AddEndedRun(std::string_view user, std::string_view queue, MilliGpu gpus, Time start,
                   Time end) {
    usage_.AddEndedRun(user, queue, gpus, start, end);
  }

  // --- jobs ---
  // REQUIRES: the id is new, the shape is valid and tasks >= 1.
  void Submit(JobSpec spec, Time now, EarlierRuns earlier = {});
  // Held jobs stay in the state but are never started.
  void Hold(JobId id);
  void Release(JobId id);
  // Applies a Decision's start: placement and starvation guarantee.
  // REQUIRES: pending, and capacity().CanAllocate(start.placement).
  void Start(const JobStart& start, Time now);
  // A start without a guarantee, for owners that place jobs themselves.
  void Start(JobId id, Placement placement, Time now);
  // A running job ended (for any reason); it leaves the state.
  void Finish(JobId id, Time now);
  // A running job was stopped to make room and goes back to the queue.
  void Preempt(JobId id, Time now);
  // A running job's run ended for another reason (its node was lost, it
  // failed with retries left, its owner requeued it) and it goes back to
  // the queue. Not a preemption: its earlier stops protect its next run
  // (Policy::min_run_growth), this does not.
  void Requeue(JobId id, Time now);
  // A running job was asked to stop (it keeps its GPUs until it has): no
  // policy picks it as a victim again.
  void MarkStopping(JobId id);
  // A waiting job's spec changed (its owner or an admin updated its queue,
  // priority or time limit): it keeps its place in time and its history.
  // REQUIRES: the job is pending or held, and `spec.id` is its id.
  void Amend(JobSpec spec);
  // A pending, held or running job is removed.
  void Cancel(JobId id, Time now);
  // A running job saved a checkpoint at `at`: preempting it now loses less.
  // Two reports in one run tell its period (Job::checkpoint_period).
  void ReportCheckpoint(JobId id, Time at);

  const Job* Find(JobId id) const;
  const Job& Get(JobId id) const;
  // Live jobs by state, ascending id.
  const JobIndex& pending() const { return pending_; }
  const JobIndex& running() const { return running_; }
  // The running jobs that asked to be preemptible: the only victims most
  // policies may choose, so a preemptive cycle walks these, not every run.
  const JobIndex& running_preemptible() const { return running_preemptible_; }
  const JobIndex& held() const { return held_; }
  // Running elements of each throttled job array (JobSpec::array_limit), by
  // array id, kept as jobs start and stop so that a cycle's ArrayThrottle
  // need not walk the running jobs.
  using ArrayCounts = std::map<JobId, int32_t>;
  const ArrayCounts& running_array_elements() const { return running_array_elements_; }
  // When each running job's current run began, and when the decision that
  // started it expected it to end: the jobs of running(), in the same
  // order. A plan kept across cycles (QueueOrder::ends) tells the run it
  // knows from a later run of the same job by this, and plans a run started
  // since with its expected end, without reading every job's memory.
  struct RunStart {
    JobId id;
    Time started;
    // JobStart::expected_remaining after `started`; none for a start that
    // came without one (an owner that places jobs itself, a restart).
    std::optional<Time> expected_end;
  };
  const std::vector<RunStart>& run_starts() const { return run_starts_; }
  const UsageLedger& usage() const { return usage_; }
  // The pending jobs by when their wait began, counted as if unbroken: the
  // submit time plus the time the job has already run (a requeued job's
  // runs are not waiting). A pending job has waited at least D at `now`
  // exactly when its origin <= now - D, so a check for jobs past a wait
  // bound walks only those (BerthOrderer's starvation pass), not the queue.
  struct PendingWait {
    Time origin;
    JobId id;
    Time submit;
    int64_t milli_gpus = 0;  // the whole job's
    bool operator<(const PendingWait& other) const {
      return origin != other.origin ? origin < other.origin : id < other.id;
    }
  };
  const std::set<PendingWait>& pending_by_wait() const { return pending_by_wait_; }
  // The GPUs all pending jobs ask for, in milli-GPUs.
  int64_t pending_milli_gpus() const { return pending_milli_gpus_; }
  // Users and queues with jobs waiting (pending or held), with how many:
  // fair share counts them among those sharing without walking the queue.
  using WaitingCounts = std::map<std::string, int64_t, std::less<>>;
  const WaitingCounts& waiting_users() const { return waiting_users_; }
  const WaitingCounts& waiting_queues() const { return waiting_queues_; }
  // The task shapes of the waiting jobs, with how many tasks of each: the
  // workload a fragmentation-aware placement keeps room for.
  struct WaitingShape {
    TaskShape task;
    std::vector<std::string> gpu_types;  // empty: any model
    auto operator<=>(const WaitingShape&) const = default;
  };
  using ShapeCounts = std::map<WaitingShape, int64_t>;
  const ShapeCounts& waiting_shapes() const { return waiting_shapes_; }

 private:
  Job& GetMutable(JobId id);
  // Charges the current run of a running job to the usage ledger, and
  // returns its GPUs to the free pool.
  void EndRun(Job& job, Time now);
  // A job joined (+1) or left (-1) the pending and held jobs (counts of
  // users, queues and task shapes).
  void CountWaiting(const JobSpec& spec, int64_t delta);
  // Every move into or out of the pending jobs goes through these.
  void AddPending(Job& job);
  void RemovePending(Job& job);

  NodeTable nodes_;
  std::vector<NodeState> node_states_;
  Capacity capacity_;
  std::map<JobId, Job> jobs_;  // every live job; map keeps pointers stable
  JobIndex pending_;
  std::set<PendingWait> pending_by_wait_;
  int64_t pending_milli_gpus_ = 0;
  JobIndex running_;
  std::vector<RunStart> run_starts_;
  JobIndex running_preemptible_;
  JobIndex held_;
  ArrayCounts running_array_elements_;
  UsageLedger usage_;
  WaitingCounts waiting_users_;
  WaitingCounts waiting_queues_;
  ShapeCounts waiting_shapes_;
  std::optional<QuotaTree> quotas_;
  UserShares user_shares_;
};

}  // namespace berth::core
