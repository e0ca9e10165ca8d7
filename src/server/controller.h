// The Controller: the control plane's single owner of job and node state.
//
// It keeps the live jobs and the nodes in memory (a core ClusterState plus
// the JobRecords behind it), writes every change to the Store before it
// acts on it, and runs decision cycles: snapshot -> core::Decide -> persist
// -> apply. Agents learn what to run from the desired state it returns on
// every heartbeat; what they report is the truth it converges to.
//
//   submit/cancel/release --+                      +-- heartbeat: tasks running/exited
//                           v                      v
//                 +-----------------------------------------+
//                 | jobs_ (JobRecord by id)  nodes_ (by name)|
//                 | state_ (core::ClusterState)              |
//                 +-----------------------------------------+
//                           |  RunCycle: Decide, persist, apply
//                           v
//                  desired state per node  -->  agents
//
// Thread-safe: one mutex guards everything; store writes for submissions
// happen outside it (group commit batches concurrent submits).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "core/cluster_state.h"
#include "core/decision.h"
#include "core/paged_id_map.h"
#include "core/policy.h"
#include "protocol/desired_state.h"
#include "protocol/node_report.h"
#include "server/auth.h"
#include "server/eta_book.h"
#include "server/history.h"
#include "server/job_request.h"
#include "server/job_step.h"
#include "server/job_update.h"
#include "server/job_view.h"
#include "server/metrics.h"
#include "server/silence_watch.h"
#include "store/records.h"
#include "store/store.h"

namespace berth::server {

struct ControllerOptions {
  std::string policy = "berth";
  core::PolicyConfig policy_config;
  core::ClusterOptions cluster;                // fair-share usage half-life
  core::ClusterState::UserShares user_shares;  // fair-share shares of users ([[users]])
  // The node lease (issue 32): every heartbeat answer grants the node this
  // long, from when its agent sent the heartbeat; a node that could not
  // renew it stops its tasks when it ends. A node silent for this long plus
  // lease_margin (by the monotonic clock) is down and its jobs are requeued:
  // by then its tasks are surely stopped, so a job never runs twice.
  core::Duration heartbeat_timeout = core::Duration::Seconds(30);
  // What a node may take, after its lease ended, to have its tasks stopped
  // (protocol::kLeaseStopWithin), plus slack for the two machines' clock
  // rates and the time a heartbeat spends in flight.
  core::Duration lease_margin = protocol::kLeaseStopWithin + core::Duration::Seconds(2);
  // How often a cycle is a full pass: it ranks every pending job and
  // computes its reason and ETA.
  core::Duration explain_every = core::Duration::Seconds(10);
  // Between full passes, cycles walk at most this many jobs from the front
  // of the last full pass's order, plus the jobs that arrived since
  // (core::DecideOptions::reuse; Slurm's default_queue_depth).
  size_t queue_depth = 1000;
  SubmissionLimits limits;
  // Accept every job, even one that no registered node could ever host,
  // for clusters that scale up (a job may ask for it alone with
  // JobRequest::wait_for_nodes). Off: such a job is refused at submit.
  bool wait_for_nodes = false;
  // Final states of ended jobs kept in memory for dependencies and
  // idempotent retries; beyond this many the oldest ids are looked up in the
  // store instead, so a long-running server's memory stays bounded.
  size_t ended_kept = 100'000;
};

// --- what agents send and receive: the protocol's messages (protocol/) ---
using protocol::DesiredState;
using protocol::GpuReport;
using protocol::Heartbeat;
using protocol::NodeRegistration;
using protocol::TaskAssignment;
using protocol::TaskOutcome;
using protocol::TaskPhase;
using protocol::TaskReport;
using protocol::TaskStop;

// What `explain` answers.
struct Explanation {
  JobView job;
  std::string reason;  // JobView::reason()
  std::string message;
  std::optional<int64_t> position;
  std::optional<core::JobId> blocker;
  std::optional<core::Time> eta;
  std::optional<core::EtaInterval> eta_interval;  // the 80% interval around `eta`
  // What the node pipeline said of every node, for a job that does not fit
  // (now, or ever): the counts behind the message.
  std::shared_ptr<const core::NodeTally> nodes;
};

struct QueueView {
  core::QueueSpec spec;
  core::MilliGpu used;
  int64_t pending = 0;
  int64_t running = 0;
  double fair_share_usage = 0;  // decayed GPU-seconds
};

// Where the server reaches a node's agent: its logs and its wake call.
struct AgentEndpoint {
  std::string node;
  std::string address;  // the agent's host:port (empty: it serves nothing)
  std::string key;      // what the agent wants as bearer token (its logs key)
};

// Where a task's log lives: on the agent of the node that ran it.
struct LogLocation {
  AgentEndpoint agent;
  bool node_up = false;
};

struct NodeView {
  store::NodeRecord record;
  std::vector<std::pair<core::JobId, std::vector<int32_t>>> jobs;  // job -> GPUs it holds here
};

// An admin's ask of a node: take no new work (its work finishes), or take
// work again.
enum class DrainAction { kDrain, kUndrain };

class Controller {
 public:
  // `metrics`, when given, receives the queue-wait histogram and the
  // finished-jobs counter as they happen.
  Controller(store::Store& store, const Clock& clock, ControllerOptions options,
             Metrics* metrics = nullptr);
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Loads nodes, queues and live jobs from the store. Running jobs stay
  // running: their agents will report them.
  Status Recover();

  // --- jobs (HTTP API) ---
  Result<std::vector<core::JobId>> Submit(const Principal& who, Submission submission);
  Result<JobView> GetJob(const Principal& who, core::JobId id);
  Result<std::vector<JobView>> ListJobs(const Principal& who, store::JobFilter filter);
  Status Cancel(const Principal& who, core::JobId id);
  Status Release(const Principal& who, core::JobId id);
  // Sends `signal` (a canonical name, protocol/signal_name.h) to the
  // running job's tasks: every process of each, or only task 0's main
  // process when `batch_only` (scancel --signal [--batch]). Delivered once;
  // kept in memory only (a server restart forgets signals not yet
  // delivered). FailedPrecondition when the job is not running.
  Status Signal(const Principal& who, core::JobId id, const std::string& signal, bool batch_only);
  // Stops the running job's tasks and puts it back in the queue, or puts
  // an ended job back; its next run has attempt (and SLURM_RESTART_COUNT)
  // one higher (scontrol requeue). FailedPrecondition when it is waiting,
  // ended without running, or was submitted with requeue false.
  Status Requeue(const Principal& who, core::JobId id);
  // controller_updates.cc: a waiting job held by its owner (Slurm's
  // scontrol hold), and a waiting job's time limit, queue or priority
  // changed (scontrol update). FailedPrecondition once it has started.
  Status Hold(const Principal& who, core::JobId id);
  Status Update(const Principal& who, core::JobId id, const JobUpdate& update);
  // The owner (or an admin) says the running job saved a checkpoint now:
  // preempting it loses only the work since (core/checkpoint.h). Returns
  // the time recorded. FailedPrecondition when the job is not running.
  Result<core::Time> ReportCheckpoint(const Principal& who, core::JobId id);
  Result<Explanation> Explain(const Principal& who, core::JobId id);
  // The last cycle's view of the given pending jobs (position, ETA), by id.
  std::map<core::JobId, core::PendingJob> PendingViews(const std::vector<core::JobId>& ids);
  // The owner's (or an admin's) way to a task's log.
  Result<LogLocation> LocateLog(const Principal& who, core::JobId id, int32_t task);

  // --- steps (srun inside a running job; controller_steps.cc, job_step.h) ---
  // The owner (or an admin) runs a step in the job's current run.
  // FailedPrecondition when the job is not running.
  Result<JobStep> LaunchStep(const Principal& who, core::JobId id, StepRequest request);
  Result<JobStep> GetStep(const Principal& who, core::JobId id, int32_t step);
  // The steps of the job's current (or last) run, by id, as GetStep shows each.
  Result<std::vector<JobStep>> ListSteps(const Principal& who, core::JobId id);
  // Stops the step's tasks (srun interrupted); its tasks end as signalled.
  Result<JobStep> CancelStep(const Principal& who, core::JobId id, int32_t step);

  // --- nodes ---
  // Returns the node lease the answer grants (heartbeat answers carry
  // theirs in DesiredState::lease).
  Result<core::Duration> RegisterNode(const Principal& agent, NodeRegistration registration);
  Result<DesiredState> HandleHeartbeat(const Principal& agent, Heartbeat heartbeat);
  Status SetDrained(const Principal& who, const std::string& node, DrainAction action);
  Result<std::vector<NodeView>> ListNodes(const Principal& who);

  // --- team queues ---
  Result<std::vector<QueueView>> ListQueues(const Principal& who);
  // Replaces the queue tree (admins). Validated before anything changes.
  Status SetQueues(const Principal& who, std::vector<core::QueueSpec> queues);

  // --- scheduling ---
  struct CycleOutcome {
    bool changed = false;  // a job started or is being preempted
    bool full = false;     // the cycle planned an ETA for every pending job
    // When the oldest event this cycle is the first to see arrived (none:
    // a tick with nothing new). Wall time, for the event-to-decision metric.
    std::optional<std::chrono::steady_clock::time_point> oldest_event;
    // A full pass's ETA plan, for the owner to run outside the lock
    // (core::PlanEtas) and hand back with ApplyEtas.
    std::optional<core::EtaPlan> eta_plan;
    // The write of the cycle's starts and preemptions, queued under the
    // lock and applied in memory already: the owner waits for it outside
    // the lock. Agents hear of the starts only in heartbeat answers, which
    // wait until what they read is durable. Not valid when nothing changed.
    std::shared_future<Status> durable;
    // Where the cycle's time went, for berth_scheduler_cycle_part_seconds:
    // waiting for the lock, core::Decide, and queueing its starts and
    // preemptions for the store and applying them to memory and the core.
    struct Parts {
      std::chrono::steady_clock::duration lock_wait{};
      std::chrono::steady_clock::duration decide{};
      std::chrono::steady_clock::duration apply{};
    };
    Parts parts;
  };
  // One decision cycle at the clock's now.
  Result<CycleOutcome> RunCycle();
  // The ETAs of a full pass's plan made at `planned_at`, for the jobs
  // still pending: each with its 80% interval, capped by what time limits
  // guarantee (EtaBook).
  void ApplyEtas(const std::vector<core::PlannedEta>& etas, core::Time planned_at);
  // Marks nodes whose heartbeats stopped as down and requeues their jobs.
  Status CheckHeartbeats();
  // Blocks until something happened that a cycle should see, or `timeout`.
  void WaitForWork(std::chrono::milliseconds timeout);
  // Wakes WaitForWork (submits, heartbeats and cancels call it).
  void Notify();
  // Called, with the controller's lock held (so it must only queue), when
  // a node gains a task to start or to stop: its agent can be told at once
  // instead of at its next heartbeat (AgentWaker). Set before serving.
  void SetWakeAgent(std::function<void(const AgentEndpoint&)> wake);
  // Caps the node leases this server grants by how long it is surely the
  // leader: a lease granted at `now` ends at most at min(now, deadline) +
  // heartbeat_timeout, so once a successor has waited a full lease plus the
  // margin from its own start, no lease of this server's is left. Default:
  // no cap (time_point::max()). The hook is called with the controller's
  // lock held: it must only read. Set before serving.
  void SetLeadershipDeadline(std::function<std::chrono::steady_clock::time_point()> deadline);
  // Gives every node that is not down a full lease and margin from now
  // before it may be declared down: for a server that takes over from
  // another, which cannot know when each node last renewed its lease.
  // (Recover() does the same for a server that starts.)
  void RestartNodeLeases();

  // The controller's time: the wall clock's reading when it was made,
  // moved on by the monotonic clock. Every time it stores (submit, start,
  // end, heartbeat) and every duration it measures (time run, usage,
  // silence, time limits in the core's plans) comes from it, so a step of
  // the wall clock changes none of them, and an end never precedes its
  // start. Its labels differ from the wall clock by whatever steps the wall
  // clock took since the server started (issue 32). Thread-safe.
  core::Time Now() const;

  // For metrics and health.
  struct NodeGpus {
    std::string gpu_type;
    std::string state;  // "up", "draining", "down"
    int64_t total = 0;
    int64_t allocated = 0;
    int64_t healthy = 0;
  };
  struct Stats {
    std::map<std::pair<std::string, std::string>, int64_t> jobs_by_state_and_queue;
    std::map<std::string, NodeGpus> nodes;  // by node name
    // Decayed GPU-seconds, the fair-share factor's input.
    std::map<std::string, double> queue_usage;
    std::map<std::string, double> user_usage;
    int64_t cycles = 0;
  };
  Stats GetStats();
  // How the first ETAs given turned out, since this server started.
  EtaBook::Accuracy EtaAccuracy();
  // The runs going on now, as usage records that end now (accounting
  // reports count them up to the moment they are asked).
  std::vector<store::UsageRecord> RunningUsage();
  // The queue waits (submission to first start) of the jobs that first
  // started since the last call; the scheduler loop samples them into the
  // dashboard's history. Fixed size: it grows nothing while no loop takes it.
  WaitHistogram TakeStartWaits();

 private:
  // Applies a cycle's decision to the members below (plan_applier.h).
  class PlanApplier;

  struct NodeEntry {
    store::NodeRecord record;
    core::NodeId id{};
  };

  // Everything below REQUIRES mutex_ held.
  // Replaces the team queues (nullopt: none).
  void SetQuotasLocked(std::optional<core::QuotaTree> tree);
  // Something a cycle should see happened: wake the scheduler loop.
  void WakeLocked();
  // The job's nodes have something new to start or stop: tell their agents.
  void WakeAgentsLocked(const store::JobRecord& job);
  // Adds the job to (or removes it from) the per-node index of placed jobs.
  // Also gives a placed job its MASTER_PORT: the one it has unless another
  // live job on its task 0's node holds it (master_port.h).
  void IndexPlacementLocked(store::JobRecord& job);
  void UnindexPlacementLocked(const store::JobRecord& job);
  // The lease an answer sent now grants its node: min(now, leadership
  // deadline) + heartbeat_timeout - now, never negative.
  core::Duration LeaseToGrantLocked() const;
  // A heartbeat's changes to memory, queued for the store; the answer.
  Result<DesiredState> HeartbeatLocked(const Heartbeat& heartbeat);
  // Queues `records` with the usage of the runs that ended since the last
  // write (unwritten_usage_), in one write.
  std::shared_future<Status> QueueRecordsLocked(std::vector<store::JobRecord> records);
  // Queues the changed jobs' records, with the usage of the runs that ended
  // since the last write (unwritten_usage_), and bumps their versions: the
  // store writes them in the order they were queued. The future tells when
  // they are durable (store::Store::QueueJobChanges).
  std::shared_future<Status> QueuePersistLocked(const std::vector<store::JobRecord*>& changed);
  // QueuePersistLocked, then the jobs that ended leave memory (the pointers
  // in `changed` to them dangle afterwards).
  std::shared_future<Status> QueueCommitLocked(const std::vector<store::JobRecord*>& changed);
  // The same, waiting for the write under the lock: for requests that are
  // rare (cancels, holds, node changes) and answer only once it is durable.
  Status PersistLocked(const std::vector<store::JobRecord*>& changed) {
    return QueuePersistLocked(changed).get();
  }
  Status CommitLocked(const std::vector<store::JobRecord*>& changed) {
    return QueueCommitLocked(changed).get();
  }
  void AddToStateLocked(store::JobRecord& job, core::EarlierRuns earlier = {});
  // The job has ended (or will never run): the core and the predictor's
  // bursts let it go.
  void LeaveCoreLocked(core::JobId id, core::Time now);
  // The core's view of a job's record.
  static core::JobSpec JobSpecOf(const store::JobRecord& job);
  // Fair share's usage and the predictor's history from the runs the store
  // holds, for a restarted controller (controller_history.cc). `run_times`:
  // each job's runs read, added up.
  Status ReadHistoryLocked(core::Time now, std::map<core::JobId, core::Duration>& run_times);
  // The predictor's run times and bursts, and the ETA calibration's judged
  // first ETAs, from the jobs those runs belong to and the live ones.
  Status ReplayJobsLocked(const std::map<core::JobId, core::Duration>& run_times);
  // InvalidArgument saying why, when no registered node could ever host
  // the request (unless it, or the server, waits for nodes).
  Status CheckCanEverFitLocked(const store::JobRequest& request) const;
  // What the node pipeline says of every node for a pending job that does
  // not fit now (or ever, kInfeasible); null for other reasons.
  std::shared_ptr<const core::NodeTally> TallyLocked(const store::JobRecord& job,
                                                     core::ReasonCode reason) const;
  // Where a job's dependencies stand: all ended the way it asked, some
  // still running or waiting, or one ended the other way (it never starts).
  enum class Dependencies { kMet, kWaiting, kNeverSatisfied };
  Dependencies CheckDependenciesLocked(const store::JobRecord& job) const;
  // --dependency=singleton: a live job of the same user and name submitted
  // before it. O(live jobs before it).
  bool HasEarlierNamesakeLocked(const store::JobRecord& job) const;
  // Keep live_by_name_ with jobs_: a job enters it as it enters jobs_ and
  // leaves with it.
  void AddLiveNameLocked(const store::JobRecord& job);
  void EraseLiveNameLocked(const store::JobRecord& job);
  void ReleaseDependentsLocked(std::vector<store::JobRecord*>& changed);
  // Remembers a job's final state in ended_, dropping the oldest beyond the
  // limit.
  void RememberEndedLocked(core::JobId id, core::JobState state);
  // Whether `id`, returned by the store for a submission, is a job this
  // controller already knows (a retry with the same idempotency key).
  bool KnownJobLocked(core::JobId id);
  // Whether a failed run starts another while the job has retries left.
  enum class Retry { kAllowed, kNever };
  void EndRunLocked(store::JobRecord& job, core::JobState outcome, core::JobReason reason,
                    std::vector<store::JobRecord*>& changed, Retry retry = Retry::kAllowed);
  // The job's node is gone: requeue it, or fail it if it asked not to be.
  void LoseNodeLocked(store::JobRecord& job, const std::string& node,
                      std::vector<store::JobRecord*>& changed);
  Status RequeueEndedLocked(const Principal& who, core::JobId id);
  void RequeueLocked(store::JobRecord& job, core::JobReason reason,
                     std::vector<store::JobRecord*>& changed);
  // Queues the usage of the job's run that ends at `end`, to be written with
  // the job's record (QueuePersistLocked), in one transaction.
  // Also records on the job what the run's tasks used (their exits' cgroup
  // measurements), so `berth show` has them.
  void WriteRunUsageLocked(store::JobRecord& job, const core::Job& run, core::Time end);
  // The running job saved a checkpoint at `at` (clamped into its run, up to
  // now). Returns whether its record changed: reports within
  // kCheckpointResolution of the last one are the same checkpoint seen
  // again (an agent reports its task's file on every heartbeat), and are
  // not written again (controller_checkpoints.cc).
  bool RecordCheckpointLocked(store::JobRecord& job, core::Time at);
  Result<store::JobRecord*> FindLiveLocked(core::JobId id);
  // The live job if `who` may change it; else why not (gone, ended, not theirs).
  Result<store::JobRecord*> FindOwnLiveLocked(const Principal& who, core::JobId id);
  // Steps: what the job's task `task` must run now; the ended step tasks a
  // node reported (controller_steps.cc).
  std::vector<protocol::StepLaunch> StepLaunchesLocked(const store::JobRecord& job,
                                                       int32_t task) const;
  // Records the step task ends a node reports; the jobs they change join `changed`.
  void ProcessStepReportsLocked(const std::string& node,
                                const std::vector<protocol::StepTaskReport>& reports,
                                std::vector<store::JobRecord*>& changed);
  // The step of `job` (the caller's, or an admin's call), or NotFound.
  Result<JobStep*> FindStepLocked(const Principal& who, store::JobRecord& job, int32_t step);
  // The step as GET shows it: of a live job or a stored one.
  Result<JobStep> ViewStepLocked(const Principal& who, core::JobId id, int32_t step);
  // The job (live or stored) and its steps as GET shows them: all of them,
  // or only `step`.
  Result<std::vector<JobStep>> ViewStepsLocked(const Principal& who, core::JobId id,
                                               std::optional<int32_t> step);
  Status CheckOwnerLocked(const Principal& who, const store::JobRecord& job) const;
  // A live job as readers see it: a pending one with the last cycle's reason
  // and message.
  // How much a reader gets: a listing the last cycle's reason and message;
  // one job read alone also the node tally behind them (O(nodes)).
  enum class Detail { kListing, kWithNodes };
  JobView ViewLocked(const store::JobRecord& job, Detail detail) const;
  std::optional<core::Placement> PlacementFromRecordLocked(const store::JobRecord& job) const;
  DesiredState DesiredForLocked(const std::string& node) const;
  // Whether a task of the job's run was stopped by its node's lease.
  bool StoppedByLeaseLocked(const store::JobRecord& job) const;
  // Loses the runs of jobs with a task that ran on `node` and that its
  // report no longer lists (running or exited).
  void LoseVanishedTasksLocked(const std::string& node, const std::vector<TaskReport>& tasks,
                               std::vector<store::JobRecord*>& changed);
  void ProcessTaskReportsLocked(const std::string& node, const std::vector<TaskReport>& tasks,
                                DesiredState& desired, std::vector<store::JobRecord*>& changed);

  store::Store& store_;
  const Clock& clock_;
  const core::Time wall_at_start_;
  const std::chrono::steady_clock::time_point steady_at_start_;
  std::function<std::chrono::steady_clock::time_point()> leadership_deadline_;
  ControllerOptions options_;
  Metrics* metrics_;
  core::Policy policy_;
  std::function<void(const AgentEndpoint&)> wake_agent_;

  std::mutex mutex_;
  std::condition_variable work_;
  bool work_pending_ = false;
  // Arrival of the oldest event no cycle has seen yet. The controller's
  // scheduling time is the injected clock; this is only measured, as the
  // wall time from an event to the decision that saw it.
  std::optional<std::chrono::steady_clock::time_point> unseen_since_;
  core::ClusterState state_;
  std::map<core::JobId, store::JobRecord> jobs_;  // live jobs
  // Usage of runs that ended, for the next QueuePersistLocked: written with
  // the jobs' final records, in the same transaction.
  std::vector<store::UsageRecord> unwritten_usage_;
  // The nodes that are not down, in the order they were last heard from:
  // CheckHeartbeats reads only the silent ones.
  SilenceWatch silence_;
  // Jobs that ended since they were loaded: their final state, for
  // dependencies and idempotent retries, at most options_.ended_kept of them
  // (older ones are looked up in the store).
  std::map<core::JobId, core::JobState> ended_;
  // Ids up to this may be ended jobs not in ended_ (ended before this
  // server started, or dropped from ended_): only for them does the store
  // tell a retried submission of an ended job from a new one.
  core::JobId ended_forgotten_up_to_{0};
  // Held jobs waiting for their dependencies (ids may linger after they
  // leave that state; the walk drops them): what ReleaseDependentsLocked
  // walks, instead of every live job on every heartbeat.
  std::set<core::JobId> awaiting_dependencies_;
  // Whether a job ended (or the server started) since ReleaseDependentsLocked
  // last walked: only an end can meet a dependency, so a heartbeat that
  // ended nothing skips the walk.
  bool dependencies_unchecked_ = true;
  // The live jobs of each (user, job name): whom a singleton waits for,
  // without a walk over every live job.
  std::map<std::pair<std::string, std::string>, std::set<core::JobId>> live_by_name_;
  std::map<std::string, NodeEntry> nodes_;
  // The live jobs placed on each node, by node name: a heartbeat builds its
  // node's desired state from these instead of walking every live job.
  std::map<std::string, std::set<core::JobId>> placed_on_;
  // The MASTER_PORTs given to the live jobs whose task 0 is on each node.
  std::map<std::string, std::set<int32_t>> master_ports_on_;
  std::map<core::NodeId, std::string> node_names_;
  // Per job and task: the exit the agents reported for the current attempt.
  std::map<std::pair<core::JobId, int32_t>, TaskReport> exits_;
  std::set<std::pair<core::JobId, int32_t>> running_tasks_;
  // The last signal id given (Signal; ids start from the clock, so they
  // grow across restarts).
  int64_t last_signal_id_ = 0;
  // Each pending job's view from the last cycle (reason, position,
  // blocker) and ETA from the last full one. Entries of jobs no longer
  // pending may linger until they start or end: read them for pending
  // jobs only. Messages are written from it when a job is read, not per
  // cycle for every pending job.
  core::PagedIdMap<core::PendingJob> explained_;
  WaitHistogram start_waits_;  // since the last TakeStartWaits()
  core::Time last_full_explain_;
  // The order of the last full pass, which the cycles between reuse.
  std::optional<core::QueueOrder> queue_order_;
  int64_t cycles_ = 0;
  // Whether a queue admits by Unix group: Submit then looks up the
  // submitter's groups before it takes the lock. Written under the lock.
  std::atomic<bool> queues_admit_by_group_{false};
  // The ETAs told and how they turned out: intervals, accuracy metrics.
  EtaBook eta_book_;
  // What makes a full pass come before explain_every (controller_cycle.cc):
  // jobs became pending since the last one (they have no ETA yet), or the
  // earliest ETA given has passed with its job still waiting.
  bool arrived_since_full_ = false;
  std::optional<core::Time> earliest_eta_;
};

}  // namespace berth::server
