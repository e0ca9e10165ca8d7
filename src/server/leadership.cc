#include "server/leadership.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

namespace berth::server {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Who this process is, in the lease's row.
std::string Holder(const std::string& url) {
  char host[256] = "";
  ::gethostname(host, sizeof(host) - 1);
  return "pid " + std::to_string(::getpid()) + " on " + host + " (" + url + ")";
}

// The standby's answer to everything but /healthz: 503, naming the leader.
http::Router StandbyRouter(const std::shared_ptr<std::string>& leader,
                           const std::shared_ptr<std::mutex>& mutex) {
  http::Router router;
  router.Get("/healthz", [](const http::Request&, http::Response& response) {
    response.SetContent("standby\n", "text/plain");
  });
  auto answer = [leader, mutex](const http::Request&, http::Response& response) {
    std::string url;
    {
      std::lock_guard lock(*mutex);
      url = *leader;
    }
    response.status = 503;
    if (!url.empty()) response.SetHeader("X-Berth-Leader", url);
    const std::string message = url.empty()
                                    ? "standby: no server leads this store now; retry shortly"
                                    : "standby: this server does not lead; the leader is " + url;
    response.SetContent(
        nlohmann::json{{"error", {{"code", "unavailable"}, {"message", message}}}}.dump(),
        "application/json");
  };
  for (const char* method : {"GET", "POST", "PUT", "DELETE", "PATCH"}) {
    router.Add(method, "/.*", answer);
  }
  return router;
}

}  // namespace

Status WaitForDatabase(const std::function<Status()>& attempt,
                       const std::function<bool()>& keep_waiting) {
  std::chrono::milliseconds wait{250};
  while (true) {
    Status status = attempt();
    if (status.code() != StatusCode::kUnavailable) return status;
    spdlog::warn("waiting for the database: {}", status.message());
    const auto until = SteadyClock::now() + wait;
    while (SteadyClock::now() < until) {
      if (!keep_waiting()) return Unavailable("stopped while waiting for the database");
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    wait = std::min(wait * 2, std::chrono::milliseconds(5000));
  }
}

Result<std::unique_ptr<Leadership>> Leadership::Take(Options options,
                                                     http::ServerOptions standby_http, int& port) {
  auto leader = std::make_shared<std::string>();
  auto mutex = std::make_shared<std::mutex>();
  standby_http.name = "berth standby";
  BERTH_ASSIGN_OR_RETURN(std::unique_ptr<http::Server> standby,
                         http::Server::Start(standby_http, StandbyRouter(leader, mutex)));
  port = standby->port();
  if (options.url.empty()) {
    const bool tls = !standby_http.tls_cert.empty();
    options.url =
        std::string(tls ? "https://" : "http://") + standby_http.host + ":" + std::to_string(port);
  }
  store::LeaderLease::Options lease_options{Holder(options.url), options.url, options.ttl};
  std::unique_ptr<store::LeaderLease> lease;
  BERTH_RETURN_IF_ERROR(WaitForDatabase(
      [&] {
        Result<std::unique_ptr<store::LeaderLease>> connected =
            store::LeaderLease::Connect(options.database_url, lease_options);
        if (connected.ok()) lease = std::move(*connected);
        return connected.status();
      },
      options.keep_waiting));
  std::string told;  // the leader last logged
  while (true) {
    const auto sent = SteadyClock::now();
    Result<bool> taken = lease->TryAcquire();
    if (taken.ok() && *taken) {
      spdlog::info("leading the store (epoch {}) as {}", lease->epoch(), options.url);
      standby->Stop();
      std::unique_ptr<Leadership> leadership(new Leadership(options, std::move(lease)));
      leadership->valid_until_ns_ = (sent + options.ttl).time_since_epoch().count();
      return leadership;
    }
    if (!taken.ok()) {
      spdlog::warn("standby: cannot reach the database: {}", taken.status().message());
    } else if (Result<store::LeaderInfo> current = lease->Current(); current.ok()) {
      std::lock_guard lock(*mutex);
      *leader = current->url;
      if (told != current->url) {
        spdlog::info("standby: {} leads (epoch {}); taking over when its lease runs out",
                     current->url, current->epoch);
        told = current->url;
      }
    }
    // Polls five times a lease, and at least every second: a standby takes
    // over within a fifth of a ttl after the lease expired, and within a
    // second of a leader that gave it up (a clean stop).
    const auto until = SteadyClock::now() +
                       std::min<SteadyClock::duration>(options.ttl / 5, std::chrono::seconds(1));
    while (SteadyClock::now() < until) {
      if (!options.keep_waiting()) return Unavailable("stopped while standing by");
      std::this_thread::sleep_for(std::min<SteadyClock::duration>(until - SteadyClock::now(),
                                                                  std::chrono::milliseconds(100)));
    }
  }
}

Leadership::Leadership(Options options, std::unique_ptr<store::LeaderLease> lease)
    : options_(std::move(options)), lease_(std::move(lease)) {}

Leadership::~Leadership() { StopRenewing(); }

void Leadership::KeepRenewing(std::function<void(const Status&)> lost) {
  renewer_ = std::thread([this, lost = std::move(lost)] { RenewLoop(lost); });
}

void Leadership::RenewLoop(std::function<void(const Status&)> lost) {
  bool failing = false;
  while (true) {
    // Every third of a ttl; a tenth while the database is away.
    const auto pause = failing ? options_.ttl / 10 : options_.ttl / 3;
    {
      std::unique_lock lock(mutex_);
      if (stop_.wait_for(lock, pause, [this] { return stopping_; })) return;
    }
    const auto sent = SteadyClock::now();
    Status renewed = lease_->Renew();
    database_away_ = renewed.code() == StatusCode::kUnavailable;
    if (renewed.ok()) {
      valid_until_ns_ = (sent + options_.ttl).time_since_epoch().count();
      if (failing) spdlog::info("lease renewed: the database is back");
      failing = false;
    } else if (renewed.code() == StatusCode::kFailedPrecondition) {
      lost(renewed);
      return;
    } else {
      if (!failing) {
        spdlog::warn("cannot renew the lease ({}); serving stops when it runs out",
                     renewed.message());
      }
      failing = true;
    }
  }
}

SteadyClock::time_point Leadership::valid_until() const {
  return SteadyClock::time_point(SteadyClock::duration(valid_until_ns_.load()));
}

Status Leadership::Leading() const {
  if (SteadyClock::now() < valid_until()) return Status::Ok();
  return Unavailable(
      "this server could not renew its lease on the store in time (is the database "
      "reachable?); it answers again once it has, or another server takes over");
}

void Leadership::StopRenewing() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_.notify_all();
  if (renewer_.joinable()) renewer_.join();
}

void Leadership::Release() {
  StopRenewing();
  lease_->Release();
  valid_until_ns_ = 0;
}

}  // namespace berth::server
