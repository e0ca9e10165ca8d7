// The node agent: one per GPU node. It registers the node's inventory with
// the server, then every heartbeat interval sends the node's truth (tasks
// running and exited, GPU health) and reconciles with the desired state
// that comes back. It heartbeats early when a task exits or the server
// calls POST /wake (new work for this node; see wakeup.h), so jobs start
// and their GPUs come free within milliseconds, not a heartbeat interval:
//
//   loop:  refresh tasks from the state dir  (TaskRunner)
//          POST /api/v1/agent/heartbeat       (BuildHeartbeat)
//            404 "not registered" -> register again, then go on
//            unreachable / 5xx    -> wait (exponential backoff, capped);
//                                    tasks keep running meanwhile
//
// With several servers (a leader and its standbys, issue 32) each request
// follows the leader (follow/leader_follower.h): a refused connection or a
// standby's 503 moves it on, at once, to the leader the standby names or to
// the next address, each at most once per request; the loop's backoff then
// retries. A new leader that does not know the node answers 404: the node
// registers again.
//          apply Reconcile(desired, truth)     (starts, stops)
//          mark exits the server has recorded  (AcknowledgedExits)
//          collect old finished tasks
//
// Stopping the agent (Stop, SIGTERM) leaves every task running: a restarted
// agent adopts them from the state dir. To take work off a node, drain it.
// (`berth dev` asks its agents to stop their tasks too: stop_tasks_on_exit.)
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/agent_http.h"
#include "agent/gpu_inventory.h"
#include "agent/task_runner.h"
#include "agent/wakeup.h"
#include "common/clock.h"
#include "common/lock_file.h"
#include "common/status.h"

namespace httplib {
struct Response;
}
namespace berth::follow {
class LeaderFollower;
}

namespace berth::agent {

// Whether tasks run in cgroups of their own (task_cgroup.h, cgroup_setup.h).
enum class CgroupMode {
  kAuto,      // where the agent can create them; else it says so and runs tasks without
  kRequired,  // or the agent does not start
  kOff,       // never (development machines)
};

struct AgentOptions {
  // http://host:port or https://host:port; or several, comma-separated (a
  // leader and its standbys).
  std::string server_url;
  std::string ca_file;  // with https: the CA that signed the server's certificate
  std::string token;    // an agent token for `node`
  std::string node;
  std::string listen = "127.0.0.1:0";  // the logs endpoint; port 0 picks one
  // What the server is told (logs, and MASTER_ADDR of gangs whose task 0
  // runs here); empty: the listen host and the bound port.
  std::string advertise;
  std::string state_dir;
  std::chrono::milliseconds heartbeat_interval{1000};
  std::chrono::milliseconds max_backoff{30000};
  // How long finished tasks (and their logs) stay after the server saw them.
  core::Duration keep_finished = core::Duration::Hours(24);
  std::map<std::string, std::string> labels;
  // Node features jobs may ask for with --constraint ("ib", "nvlink").
  std::vector<std::string> features;
  // Stop every task when the agent exits (berth dev: Ctrl-C stops it all),
  // SIGTERM then SIGKILL after `exit_grace`. Off by default: a production
  // agent's restart must not touch its tasks.
  bool stop_tasks_on_exit = false;
  // Tasks may run as root (TaskRunnerOptions::allow_root_jobs).
  bool allow_root_jobs = false;
  core::Duration exit_grace = core::Duration::Seconds(5);
  // The supervisor's argv before the task dir; see TaskRunnerOptions.
  std::vector<std::string> supervisor_command;
  CgroupMode cgroups = CgroupMode::kAuto;
  // Every task's cap on processes and threads (pids.max).
  int64_t task_pids_max = 32768;
  // The container runtime jobs in an image run with (container_runtime.h):
  // checked at start; a node where it does not work registers without one.
  ContainerRuntimeOptions containers;
};

// What the agent has done, for tests and logs. Thread-safe reads.
struct AgentStats {
  int64_t registrations = 0;
  int64_t heartbeats_ok = 0;
  int64_t heartbeats_failed = 0;
  int64_t tasks_started = 0;
  int64_t tasks_stopped = 0;
  int64_t tasks_fenced = 0;  // stopped because the node's lease ended
};

class Agent {
 public:
  // Discovers the GPUs, adopts the tasks in the state dir and starts
  // serving logs; registration and heartbeats then run on a thread of their
  // own (a server that is down is retried, never fatal).
  static Result<std::unique_ptr<Agent>> Start(AgentOptions options,
                                              std::unique_ptr<GpuInventory> inventory,
                                              const Clock& clock);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Stops the loop and the HTTP endpoint; tasks keep running (unless
  // stop_tasks_on_exit).
  void Stop();
  // The address registered with the server (host:port).
  const std::string& address() const { return address_; }
  AgentStats stats() const;

 private:
  Agent(AgentOptions options, const Clock& clock);
  enum class RoundResult { kOk, kRegisterAgain, kFailed };
  void Loop();
  // One round: heartbeat and reconcile.
  RoundResult Round();
  bool Register();
  // POSTs to the server that leads, through the loop's connection, kept
  // alive from one heartbeat to the next (made on first use; httplib
  // reconnects after a failure). Unavailable when no server answered.
  Result<httplib::Response> PostToServer(const std::string& path, const std::string& body);
  void Apply(const ReconcilePlan& plan);
  void StopAllTasks();
  // The server answered a request sent at `sent` (steady clock) granting
  // `lease` (none: it grants none): the node's lease, in memory and in
  // STATE/lease for the supervisors (node_lease.h).
  void RenewLease(std::chrono::steady_clock::time_point sent, std::optional<core::Duration> lease);
  // The lease ended without renewal: stops every running task (the
  // supervisors do too, on their own, in case the agent is gone).
  void FenceIfLeaseEnded();
  // How long `delay` may be slept before the lease ends and must be acted on.
  std::chrono::milliseconds UntilLeaseEnd(std::chrono::milliseconds delay) const;
  // How long `delay` may be slept before the lease must be renewed (half of
  // what is left of it).
  std::chrono::milliseconds UntilRenewal(std::chrono::milliseconds delay) const;
  std::string MetricsText();
  // Waits `delay`, or less when Stop() is called or (`early`) a task exits
  // or the server wakes the agent.
  void Sleep(std::chrono::milliseconds delay, bool early);
  bool Stopping() const;

  AgentOptions options_;
  const Clock& clock_;
  std::unique_ptr<follow::LeaderFollower> server_;  // the loop's thread only
  std::unique_ptr<GpuInventory> inventory_;
  GpuInventoryInfo inventory_info_;
  std::unique_ptr<TaskRunner> runner_;
  std::unique_ptr<AgentHttp> http_;
  std::unique_ptr<Wakeup> wakeup_;
  std::string address_;
  std::string logs_key_;
  // "v1", "v2" or "off": how tasks are fenced here (for /metrics).
  std::string cgroups_version_;
  std::string container_runtime_;                 // its description; empty: none
  std::optional<CgroupDirs> task_cgroup_parent_;  // none: tasks run without cgroups
  bool registered_ = false;                       // loop thread only
  // The end of the node's lease, by the real steady clock (CLOCK_MONOTONIC,
  // which the supervisors read too; not the injected clock). None: no lease
  // is known. Loop thread only (and Start).
  std::optional<std::chrono::steady_clock::time_point> lease_end_;
  std::optional<LockFile> state_dir_lock_;  // STATE/agent.lock while the agent runs

  mutable std::mutex mutex_;  // guards the fields below
  bool stopping_ = false;
  AgentStats stats_;
  std::vector<GpuSample> last_samples_;
  int64_t tasks_running_ = 0;

  std::thread thread_;
};

}  // namespace berth::agent
