// `berth server`: the control plane process. Opens the store, recovers the
// controller, makes sure an admin token exists, serves the HTTP API and runs
// the scheduler loop:
//
//   loop: wait for work (submit, heartbeat, cancel...) or the tick
//         (no pause: events that arrive while a cycle runs are batched
//         into the next one, so a burst costs few cycles without delaying
//         the first decision)
//         -> check heartbeats -> RunCycle (Decide, persist, apply)
//         -> every `history_every`: a sample for the dashboard's charts
//
// A cycle that gives a node a task to start or to stop wakes its agent at
// once (AgentWaker) instead of leaving it to the agent's next heartbeat.
//
// Start() returns once the API listens; Stop() (or the destructor) shuts
// everything down and joins the threads.
#pragma once

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/lock_file.h"
#include "common/status.h"
#include "http/server.h"
#include "server/agent_waker.h"
#include "server/auth.h"
#include "server/controller.h"
#include "server/eta_planner.h"
#include "server/history.h"
#include "server/http_api.h"
#include "server/leadership.h"
#include "server/metrics.h"
#include "store/store.h"

namespace berth::server {

struct ServerOptions {
  std::string listen = "127.0.0.1:8080";  // host:port; port 0 picks a free one
  std::string data_dir;                   // SQLite file and admin token live here
  // Made so at every start: the server's alone. `berth dev` adds search
  // (0711) for the tasks of other users, whose dirs its agents keep below;
  // the files in it are 0600 either way.
  std::filesystem::perms data_dir_mode = std::filesystem::perms::owner_all;
  // The user of the bootstrap admin token (the first start's). Jobs it
  // submits run as this Unix account on the nodes: `berth dev` names it
  // after the Unix user who started it.
  std::string admin_user = "admin";
  std::string postgres_url;  // when set, PostgreSQL instead of SQLite
  // PostgreSQL: several servers may share the database, one leading under
  // a lease of this length (server/leadership.h). The URL clients are sent
  // to when this one leads (the listener's URL by default).
  std::string advertise_url;
  std::chrono::milliseconds leader_lease{5000};
  // Asked while the server waits at start (for the database, for the
  // lease): false gives up (the process was told to stop).
  std::function<bool()> keep_waiting = [] { return true; };
  std::string tls_cert;  // both set: serve HTTPS
  std::string tls_key;
  // The HTTP layer's limits on connections, head and body times (the body
  // size is controller.limits.max_body_bytes).
  http::Limits http_limits;
  // /metrics without a token (it lists users and their usage): only where
  // nobody untrusted can reach the listener.
  bool public_metrics = false;
  ControllerOptions controller;
  // Team queues from the configuration: when set, they replace the stored
  // ones at start.
  std::optional<std::vector<core::QueueSpec>> queues;
  // An optional pause before each cycle, to batch events on purpose. The
  // default is none: it would add to every event-to-decision latency.
  std::chrono::milliseconds coalesce{0};
  std::chrono::milliseconds tick{1000};
  // The dashboard's history: one sample this often (by the server's clock),
  // the newest `history_capacity` kept (24 h at 5 s by default).
  core::Duration history_every = core::Duration::Seconds(5);
  size_t history_capacity = History::kDefaultCapacity;
};

class Server {
 public:
  // The process's exit status when a store write the controller had already
  // applied failed (FailStop): a supervisor should start it again.
  static constexpr int kStoreFailedExitCode = 75;  // EX_TEMPFAIL

  static Result<std::unique_ptr<Server>> Start(ServerOptions options, const Clock& clock);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  void Stop();
  // Blocks until Stop() is called from elsewhere (a signal handler thread).
  void Wait();

  int port() const { return port_; }
  std::string url() const;
  // Where the bootstrap admin token was written (data dir), if any.
  const std::string& admin_token_path() const { return admin_token_path_; }
  Controller& controller() { return *controller_; }

 private:
  Server() = default;
  // Start's steps, in order. The store is open before the first.
  // Puts the configured queues in the store, recovers the controller and
  // gives it the agent waker.
  Status StartController(const Clock& clock);
  Status BootstrapAdmin(const Clock& clock);
  // The scheduler loop's and the store writer's metrics (the controller
  // declares its own), with the store reporting its write batches to them.
  void DeclareMetrics();
  void StartEtaPlanner();
  // Serves the API and the dashboard on host_ and `port` (0: any free
  // one), and sets port_.
  Status Listen(int port);
  // The HTTP server's options for a listener on `port`.
  http::ServerOptions HttpOptions(int port) const;
  // Opens the store: SQLite in the data dir, or, on PostgreSQL, once this
  // server leads (standing by until then); `port` becomes the standby's.
  Status OpenStoreAsLeader(int& port);
  // Whether the API answers now: a lapsed leader refuses everything, and
  // changes wait while the database is away.
  Status Gate(const std::string& method, HttpApi::Access access) const;
  void SchedulerLoop();
  // Ends the process at once: memory is ahead of a store that failed.
  [[noreturn]] static void FailStop(const Status& failure);
  // Records a history sample when `history_every` has passed since the last.
  void SampleHistory();

  ServerOptions options_;
  std::optional<LockFile> data_dir_lock_;  // held while the server runs
  // Before everything that reports to it (the store's writer thread, the
  // controller), so that it is destroyed after them.
  Metrics metrics_;
  std::unique_ptr<Leadership> leadership_;  // PostgreSQL only
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<AgentWaker> waker_;  // outlives the controller, which calls it
  std::unique_ptr<Controller> controller_;
  // Plans full passes' ETAs off the scheduler thread; stopped before the
  // controller it reports to.
  std::unique_ptr<EtaPlanner> eta_planner_;
  const Clock* clock_ = nullptr;
  std::unique_ptr<History> history_;
  std::optional<core::Time> last_sample_;  // Start(), then the scheduler thread only
  std::unique_ptr<Authenticator> authenticator_;
  std::unique_ptr<HttpApi> api_;
  std::unique_ptr<http::Server> http_;
  std::thread scheduler_thread_;
  std::atomic<bool> stopping_{false};
  std::mutex stopped_mutex_;
  std::condition_variable stopped_changed_;
  bool stopped_ = false;  // Stop() has finished
  int port_ = 0;
  std::string host_;
  std::string admin_token_path_;
};

}  // namespace berth::server
