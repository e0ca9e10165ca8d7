#include "server/server.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/listen_address.h"
#include "common/lock_file.h"
#include "server/cycle_pacer.h"
#include "server/dashboard.h"

namespace berth::server {

namespace {
// The data directory (created when missing), readable by the server's user
// only: it holds the admin token and the store, with every job's
// environment.
Status MakePrivateDataDir(const std::string& data_dir, std::filesystem::perms mode) {
  std::error_code error;
  std::filesystem::create_directories(data_dir, error);
  if (!error) {
    std::filesystem::permissions(data_dir, mode, std::filesystem::perm_options::replace, error);
  }
  if (error) {
    return Unavailable("data_dir: cannot make " + data_dir + " private: " + error.message());
  }
  return Status::Ok();
}

// One server per data dir: two would both load the store, both schedule
// from their own memory and fence each other's tasks. The lock is the
// kernel's (flock), so a server killed with -9 leaves none behind.
Result<LockFile> LockDataDir(const ServerOptions& options) {
  char host[256] = "";
  ::gethostname(host, sizeof(host) - 1);
  const std::string holder = "berth server pid " + std::to_string(::getpid()) + " on " + host +
                             " (listen " + options.listen + ")\n";
  Result<LockFile> lock = LockFile::Take(options.data_dir + "/server.lock", holder);
  if (lock.status().code() == StatusCode::kFailedPrecondition) {
    return FailedPrecondition("data_dir: " + options.data_dir +
                              " is in use by another server: " + lock.status().message() +
                              "; stop it, or give this one its own data_dir");
  }
  return lock;
}

// The SQLite store in the data directory.
Result<std::unique_ptr<store::Store>> OpenSqliteStore(const ServerOptions& options) {
  if (options.data_dir.empty()) {
    return InvalidArgument("data_dir: required without a PostgreSQL url");
  }
  // SQLite makes its -wal and -shm files with the database's mode: made
  // 0600 here, before SQLite would make it 0644.
  const std::string path = options.data_dir + "/berth.sqlite";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0 || ::fchmod(fd, 0600) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return Unavailable("data_dir: cannot make " + path + " private: " + why);
  }
  ::close(fd);
  // Left by an older Berth with the database's old mode.
  for (const char* suffix : {"-wal", "-shm"}) ::chmod((path + suffix).c_str(), 0600);
  return store::OpenSqliteStore(path);
}

}  // namespace

Result<std::unique_ptr<Server>> Server::Start(ServerOptions options, const Clock& clock) {
  std::unique_ptr<Server> server(new Server());
  server->options_ = std::move(options);
  const ServerOptions& o = server->options_;
  BERTH_ASSIGN_OR_RETURN(auto listen, ParseListen(o.listen, "listen"));
  server->host_ = listen.first;
  if (!o.data_dir.empty()) {
    BERTH_RETURN_IF_ERROR(MakePrivateDataDir(o.data_dir, o.data_dir_mode));
    BERTH_ASSIGN_OR_RETURN(server->data_dir_lock_, LockDataDir(o));
  }
  int port = listen.second;
  BERTH_RETURN_IF_ERROR(server->OpenStoreAsLeader(port));
  BERTH_RETURN_IF_ERROR(server->StartController(clock));
  server->history_ = std::make_unique<History>(std::max<size_t>(o.history_capacity, 1));
  server->authenticator_ = std::make_unique<Authenticator>(*server->store_, clock);
  BERTH_RETURN_IF_ERROR(server->BootstrapAdmin(clock));
  server->DeclareMetrics();
  server->StartEtaPlanner();
  server->api_ = std::make_unique<HttpApi>(*server->controller_, *server->authenticator_,
                                           *server->store_, clock, server->metrics_,
                                           o.controller.limits, *server->history_, o.history_every);
  BERTH_RETURN_IF_ERROR(server->Listen(port));
  // The charts have a first point at once, taken before anything can
  // change (the scheduler thread takes the next ones).
  server->SampleHistory();
  server->scheduler_thread_ = std::thread([s = server.get()] { s->SchedulerLoop(); });
  server->api_->SetReady(true);
  spdlog::info("berth server listening on {}", server->url());
  return server;
}

Status Server::OpenStoreAsLeader(int& port) {
  const ServerOptions& o = options_;
  if (o.postgres_url.empty()) {
    BERTH_ASSIGN_OR_RETURN(store_, OpenSqliteStore(o));
    return Status::Ok();
  }
  BERTH_ASSIGN_OR_RETURN(leadership_, Leadership::Take({o.postgres_url, o.advertise_url,
                                                        o.leader_lease, o.keep_waiting},
                                                       HttpOptions(port), port));
  leadership_->KeepRenewing([](const Status& lost) {
    // Another server leads: this one's memory is no longer the truth.
    FailStop(Status(lost.code(), "stepping down: " + lost.message()));
  });
  const store::LeaderLease& lease = leadership_->lease();
  return WaitForDatabase(
      [&] {
        Result<std::unique_ptr<store::Store>> opened =
            store::OpenLeaderStore(o.postgres_url, lease);
        if (opened.ok()) store_ = std::move(*opened);
        return opened.status();
      },
      o.keep_waiting);
}

Status Server::Gate(const std::string& method, HttpApi::Access access) const {
  const bool reads = method == "GET" || access == HttpApi::Access::kAgent;
  if (leadership_) {
    // Past its lease a server answers nothing, unless the lease lapsed
    // because the database is away: then it answers reads from memory and
    // its agents until the database returns. Should another server lead by
    // then (only this one's link was down), that costs nothing but stale
    // reads: this one's writes are fenced, and the node leases it grants
    // end with its own lease (Controller::SetLeadershipDeadline).
    Status leading = leadership_->Leading();
    if (!leading.ok() && !(reads && leadership_->database_away())) return leading;
  }
  // A change would wait for the database under the controller's lock;
  // agents' reports are queued and answered within a bound instead.
  return reads ? Status::Ok() : store_->write_outage();
}

Status Server::StartController(const Clock& clock) {
  if (options_.queues) {
    BERTH_RETURN_IF_ERROR(core::QuotaTree::Make(*options_.queues).status());
    BERTH_RETURN_IF_ERROR(store_->PutQueues(*options_.queues));
  }
  controller_ = std::make_unique<Controller>(*store_, clock, options_.controller, &metrics_);
  BERTH_RETURN_IF_ERROR(controller_->Recover());
  if (leadership_) {
    // A node's lease never outlasts this server's own by more than its
    // length: a standby that takes over waits that long before it may call
    // the node silent (server/leadership.h).
    controller_->SetLeadershipDeadline(
        [leadership = leadership_.get()] { return leadership->valid_until(); });
  }
  waker_ = std::make_unique<AgentWaker>(AgentWaker::Options{});
  controller_->SetWakeAgent(
      [waker = waker_.get()](const AgentEndpoint& agent) { waker->Wake(agent); });
  clock_ = &clock;
  return Status::Ok();
}

void Server::DeclareMetrics() {
  metrics_.DeclareHistogram("berth_scheduler_cycle_seconds", "Wall time of one decision cycle.",
                            {0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2});
  // Fine buckets (x1.25 from 0.25 ms to about 18 s): the scale benchmark
  // reads p50 and p99 from them.
  std::vector<double> fine;
  for (double bound = 0.00025; bound < 20; bound *= 1.25) fine.push_back(bound);
  // Parts of a cycle are often tens of microseconds.
  std::vector<double> finer;
  for (double bound = 0.00002; bound < 20; bound *= 1.25) finer.push_back(bound);
  metrics_.DeclareHistogram(
      "berth_event_to_decision_seconds",
      "Wall time from an event a cycle must see (submit, task report, node change) to the end "
      "of the first cycle that saw it and the durable write of its decisions, including the "
      "coalescing pause.",
      fine);
  metrics_.DeclareHistogram(
      "berth_scheduler_cycle_part_seconds",
      "Where the scheduler loop's time goes, per cycle: part=\"queued\" (the oldest new "
      "event's wait for the cycle to begin), \"rest\" (the loop's pause before the cycle), "
      "\"heartbeat_check\", \"lock_wait\", \"decide\", \"apply\" (queueing its starts and "
      "preemptions for the store, applying them in memory) and \"persist\" (waiting, outside "
      "the lock, until they are durable).",
      finer);
  metrics_.DeclareHistogram(
      "berth_store_write_wait_seconds",
      "Per transaction of the store's writer: how long its oldest write waited for the "
      "writer (busy with the previous transaction, or waiting for a CPU).",
      finer);
  metrics_.DeclareHistogram(
      "berth_store_transaction_seconds",
      "Wall time of one transaction of the store's writer: its writes and the COMMIT (the "
      "flush to disk).",
      finer);
  metrics_.DeclareHistogram("berth_store_transaction_writes",
                            "Writes that shared one transaction of the store's writer "
                            "(group commit).",
                            {1, 2, 4, 8, 16, 32, 64, 128, 256, 512});
  store_->ObserveWriteBatches([metrics = &metrics_](const store::BatchTiming& t) {
    metrics->Observe("berth_store_write_wait_seconds", {},
                     std::chrono::duration<double>(t.waited).count());
    metrics->Observe("berth_store_transaction_seconds", {},
                     std::chrono::duration<double>(t.took).count());
    metrics->Observe("berth_store_transaction_writes", {}, static_cast<double>(t.writes));
  });
  metrics_.DeclareHistogram(
      "berth_scheduler_full_pass_seconds",
      "Wall time of a full pass: the cycle that orders and explains every pending job, plus "
      "planning their ETAs (on the planner's thread, outside the controller's lock).",
      fine);
}

void Server::StartEtaPlanner() {
  eta_planner_ = std::make_unique<EtaPlanner>(
      [this](std::vector<core::PlannedEta> etas, std::chrono::steady_clock::duration decided_in,
             std::chrono::steady_clock::duration planned_in, core::Time planned_at) {
        controller_->ApplyEtas(etas, planned_at);
        metrics_.Observe("berth_scheduler_full_pass_seconds", {},
                         std::chrono::duration<double>(decided_in + planned_in).count());
      });
}

http::ServerOptions Server::HttpOptions(int port) const {
  http::ServerOptions http;
  http.host = host_;
  http.port = port;
  http.tls_cert = options_.tls_cert;
  http.tls_key = options_.tls_key;
  http.limits = options_.http_limits;
  http.limits.max_body_bytes = options_.controller.limits.max_body_bytes;
  // Handlers wait on the store (a submit returns once durable) and on
  // agents (logs): enough workers that a burst of clients keeps the writer's
  // group commit full. Agents have their own (reserved) workers.
  http.workers = 32;
  http.reserved_workers = 4;
  http.name = "berth server";
  return http;
}

Status Server::Listen(int port) {
  http::Router router;
  api_->SetGate(
      [this](const std::string& method, HttpApi::Access access) { return Gate(method, access); });
  api_->Install(router, options_.public_metrics);
  InstallDashboard(router);
  BERTH_ASSIGN_OR_RETURN(http_, http::Server::Start(HttpOptions(port), std::move(router)));
  port_ = http_->port();
  return Status::Ok();
}

Server::~Server() {
  Stop();
  // Before the metrics and the controller its last plan reports to.
  eta_planner_.reset();
}

std::string Server::url() const {
  const bool tls = !options_.tls_cert.empty();
  return std::string(tls ? "https://" : "http://") + host_ + ":" + std::to_string(port_);
}

Status Server::BootstrapAdmin(const Clock& clock) {
  BERTH_ASSIGN_OR_RETURN(std::vector<store::TokenRecord> tokens, store_->ListTokens());
  if (!tokens.empty() || options_.data_dir.empty()) return Status::Ok();
  BERTH_ASSIGN_OR_RETURN(IssuedToken issued,
                         IssueToken(options_.admin_user, store::Role::kAdmin, "", clock.Now()));
  admin_token_path_ = options_.data_dir + "/admin-token";
  {
    std::ofstream out(admin_token_path_, std::ios::trunc);
    out << issued.token << "\n";
    if (!out) return Unavailable("admin token: cannot write " + admin_token_path_);
  }
  ::chmod(admin_token_path_.c_str(), 0600);
  // Stored only after the file is written: a crash in between leaves no
  // token nobody knows.
  return store_->PutToken(issued.record);
}

namespace {

// One history sample from the controller's numbers: jobs by state, GPUs on
// the nodes that can run work, and the waits of the jobs started since the
// previous sample.
HistorySample SampleFrom(core::Time now, const Controller::Stats& stats, WaitHistogram waits) {
  HistorySample sample;
  sample.time = now;
  for (const auto& [key, count] : stats.jobs_by_state_and_queue) {
    const std::string& state = key.first;
    if (state == "pending") {
      sample.pending += count;
    } else if (state == "held") {
      sample.held += count;
    } else if (state == "starting" || state == "running" || state == "completing") {
      sample.running += count;
    }
  }
  for (const auto& [name, node] : stats.nodes) {
    if (node.state == "down") {
      ++sample.nodes_down;
      continue;
    }
    ++sample.nodes_up;
    sample.gpus_total += node.total;
    sample.gpus_allocated += node.allocated;
  }
  sample.waits = std::move(waits);
  return sample;
}

}  // namespace

void Server::SampleHistory() {
  // The controller's time: a step of the wall clock neither stalls the
  // samples nor crowds them.
  const core::Time now = controller_->Now();
  if (last_sample_ && now - *last_sample_ < options_.history_every) return;
  last_sample_ = now;
  history_->Record(SampleFrom(now, controller_->GetStats(), controller_->TakeStartWaits()));
}

void Server::FailStop(const Status& failure) {
  // The controller applies changes in memory before the store has them
  // (store::Store::QueueJobChanges); once one of those writes failed, memory
  // is ahead of the store and nothing it says can be trusted. The store
  // holds a consistent prefix of the changes: a new process reloads it.
  spdlog::critical("stopping: {}", failure.ToString());
  spdlog::shutdown();
  std::_Exit(kStoreFailedExitCode);
}

void Server::SchedulerLoop() {
  CyclePacer pacer;
  std::chrono::steady_clock::time_point not_before;  // the pacer's rest
  while (!stopping_) {
    controller_->WaitForWork(options_.tick);
    if (stopping_) break;
    // A heartbeat may have been the one to find the store failed.
    if (Status failure = store_->write_failure(); !failure.ok()) FailStop(failure);
    // Events that arrive during a cycle are batched into the next one. While
    // cycles hold the controller more than the pacer's bound allows
    // (CyclePacer::Options::max_busy_share), the loop also rests as long as
    // its last cycle took, so that submits and heartbeats keep getting it.
    const auto woke = std::chrono::steady_clock::now();
    std::this_thread::sleep_until(not_before);
    if (options_.coalesce.count() > 0) std::this_thread::sleep_for(options_.coalesce);
    const auto start = std::chrono::steady_clock::now();
    if (Status status = controller_->CheckHeartbeats(); !status.ok()) {
      spdlog::error("heartbeat check failed: {}", status.ToString());
    }
    const auto checked = std::chrono::steady_clock::now();
    Result<Controller::CycleOutcome> cycle = controller_->RunCycle();
    const auto applied = std::chrono::steady_clock::now();
    // A decision counts once it is durable (agents hear of it only then).
    if (cycle.ok() && cycle->durable.valid()) {
      // Through a database outage the writes wait for it, and so does the
      // loop (a stop still ends the wait).
      while (cycle->durable.wait_for(std::chrono::milliseconds(200)) != std::future_status::ready &&
             !stopping_) {
      }
      if (stopping_) break;
      // The store's own account of the failure says what to do about it.
      if (Status status = cycle->durable.get(); !status.ok()) {
        Status failure = store_->write_failure();
        FailStop(failure.ok() ? status : failure);
      }
    }
    const auto end = std::chrono::steady_clock::now();
    auto part = [this](const char* name, std::chrono::steady_clock::duration took) {
      metrics_.Observe("berth_scheduler_cycle_part_seconds", {{"part", name}},
                       std::chrono::duration<double>(took).count());
    };
    part("rest", start - woke);
    part("heartbeat_check", checked - start);
    if (!cycle.ok()) {
      // A failed cycle changes nothing; the next one tries again.
      spdlog::error("scheduler cycle failed: {}", cycle.status().ToString());
    } else {
      if (cycle->oldest_event) {
        metrics_.Observe("berth_event_to_decision_seconds", {},
                         std::chrono::duration<double>(end - *cycle->oldest_event).count());
        part("queued",
             std::max(start - *cycle->oldest_event, std::chrono::steady_clock::duration{}));
      }
      part("lock_wait", cycle->parts.lock_wait);
      part("decide", cycle->parts.decide);
      part("apply", cycle->parts.apply);
      part("persist", end - applied);
      if (cycle->eta_plan) eta_planner_->Submit(std::move(*cycle->eta_plan), end - start);
    }
    metrics_.Observe("berth_scheduler_cycle_seconds", {},
                     std::chrono::duration<double>(end - start).count());
    // The pacer weighs the time the loop held the controller: the wait for
    // the flush (persist) holds no lock, and submits and heartbeats get it
    // meanwhile.
    not_before = end + pacer.Record(start, applied, cycle.ok() && cycle->full);
    SampleHistory();
  }
}

void Server::Stop() {
  if (stopping_.exchange(true)) return Wait();  // another thread is stopping it
  if (http_) http_->Stop();
  if (controller_) controller_->Notify();
  if (scheduler_thread_.joinable()) scheduler_thread_.join();
  if (leadership_) {
    // A standby takes over at once, after this server's last write (given
    // a few seconds: through an outage it cannot land anyway).
    (void)store_->Barrier().wait_for(std::chrono::seconds(5));
    leadership_->Release();
  }
  {
    std::lock_guard lock(stopped_mutex_);
    stopped_ = true;
  }
  stopped_changed_.notify_all();
}

void Server::Wait() {
  std::unique_lock lock(stopped_mutex_);
  stopped_changed_.wait(lock, [this] { return stopped_; });
}

}  // namespace berth::server
