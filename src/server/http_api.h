// The HTTP API: routes under /api/v1, health, metrics. Every route
// authenticates (bearer token), checks the caller's role, maps Status codes
// to HTTP statuses in one place (StatusToHttp) and answers JSON errors as
// {"error": {"code": "...", "message": "..."}}.
//
// Roles: users see the queue (others' jobs without env) and change only
// their own jobs and tokens; admins also manage nodes, queues and every
// token; agents may call only /api/v1/agent/*.
#pragma once

#include <httplib.h>

#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>

#include "common/clock.h"
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

  // Registers every route on `server`.
  void Install(httplib::Server& server);
  // Whether /readyz answers ready (recovery finished).
  void SetReady(bool ready) { ready_ = ready; }

 private:
  using Handler =
      std::function<void(const Principal&, const httplib::Request&, httplib::Response&)>;
  enum class Access { kUser, kAdmin, kAgent };

  // Wraps a handler with authentication, role checks and request metrics.
  httplib::Server::Handler Route(std::string pattern, Access access, Handler handler);
  void Fail(httplib::Response& response, const Status& status);
  void Json(httplib::Response& response, int code, const nlohmann::json& body);

  void SubmitJob(const Principal& who, const httplib::Request& request,
                 httplib::Response& response);
  void ListJobs(const Principal& who, const httplib::Request& request, httplib::Response& response);
  void GetJob(const Principal& who, const httplib::Request& request, httplib::Response& response);
  void JobLogs(const Principal& who, const httplib::Request& request, httplib::Response& response);
  void UsageReport(const Principal& who, const httplib::Request& request,
                   httplib::Response& response);
  void QueuesReport(const Principal& who, const httplib::Request& request,
                    httplib::Response& response);
  void PutQueues(const Principal& who, const httplib::Request& request,
                 httplib::Response& response);
  void HistoryReport(const Principal& who, const httplib::Request& request,
                     httplib::Response& response);
  // token_api.cc
  void CreateToken(const Principal& who, const httplib::Request& request,
                   httplib::Response& response);
  void ListTokens(const Principal& who, const httplib::Request& request,
                  httplib::Response& response);
  void RevokeToken(const Principal& who, const httplib::Request& request,
                   httplib::Response& response);
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
};

}  // namespace berth::server
