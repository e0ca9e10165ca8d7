// The HTTP API: routes under /api/v1, health, metrics. Every route
// authenticates (bearer token), checks the caller's role, maps Status codes
// to HTTP statuses in one place (StatusToHttp) and answers JSON errors as
// {"error": {"code": "...", "message": "..."}}.
//
// Roles: users see the queue (others' jobs without env) and change only
// their own jobs and tokens; admins also manage nodes, queues and every
// token; agents may call only /api/v1/agent/*.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "http/router.h"
#include "server/auth.h"
#include "server/controller.h"
#include "server/history.h"
#include "server/job_request.h"
#include "server/metrics.h"
#include "store/store.h"

namespace berth::server {

int StatusToHttp(StatusCode code);

class HttpApi {
 public:
  HttpApi(Controller& controller, Authenticator& authenticator, store::Store& store,
          const Clock& clock, Metrics& metrics, SubmissionLimits limits, const History& history,
          core::Duration history_every);

  // Registers every route. /metrics asks for an admin or metrics token
  // unless `public_metrics`.
  void Install(http::Router& router, bool public_metrics);
  // Whether /readyz answers ready (recovery finished).
  void SetReady(bool ready) { ready_ = ready; }

  // Who may call a route.
  enum class Access { kUser, kAdmin, kAgent, kMetrics };
  // Asked first for every API request, from its head: a failure is the
  // answer (a lapsed leader's 503, changes refused while the database is
  // away). Set before Install.
  using Gate = std::function<Status(const std::string& method, Access access)>;
  void SetGate(Gate gate) { gate_ = std::move(gate); }

 private:
  using Handler = std::function<void(const Principal&, const http::Request&, http::Response&)>;

  // Registers `handler` for METHOD PATTERN. The token is checked and the
  // caller's role matched to `access` from the request's head, before a
  // byte of its body is read; agents' routes run on the server's reserved
  // workers. Request metrics count it under `name`.
  void Add(http::Router& router, std::string method, const std::string& pattern,
           const std::string& name, Access access, Handler handler);
  static Status Allowed(const Principal& who, Access access, const std::string& name);
  void CountRequest(const std::string& name, int code, std::chrono::steady_clock::time_point start);
  void Fail(http::Response& response, const Status& status);
  void Json(http::Response& response, int code, const nlohmann::json& body);

  void SubmitJob(const Principal& who, const http::Request& request, http::Response& response);
  Status AddHomeMounts(const std::string& user, Submission& submission) const;
  void ListJobs(const Principal& who, const http::Request& request, http::Response& response);
  void GetJob(const Principal& who, const http::Request& request, http::Response& response);
  void JobLogs(const Principal& who, const http::Request& request, http::Response& response);
  void UsageReport(const Principal& who, const http::Request& request, http::Response& response);
  void QueuesReport(const Principal& who, const http::Request& request, http::Response& response);
  void PutQueues(const Principal& who, const http::Request& request, http::Response& response);
  void HistoryReport(const Principal& who, const http::Request& request, http::Response& response);
  // token_api.cc
  void CreateToken(const Principal& who, const http::Request& request, http::Response& response);
  void ListTokens(const Principal& who, const http::Request& request, http::Response& response);
  void RevokeToken(const Principal& who, const http::Request& request, http::Response& response);
  std::string RenderMetrics();

  Controller& controller_;
  Authenticator& authenticator_;
  store::Store& store_;
  const Clock& clock_;
  Metrics& metrics_;
  SubmissionLimits limits_;
  const History& history_;
  core::Duration history_every_;
  std::atomic<bool> ready_{false};
  Gate gate_;
};

}  // namespace berth::server
