#include "server/http_api.h"

#include <httplib.h>

#include <chrono>
#include <optional>
#include <string>

#include "common/time_format.h"
#include "common/unix_account.h"
#include "protocol/desired_json.h"
#include "protocol/report_json.h"
#include "protocol/seconds_json.h"
#include "server/api_json.h"
#include "server/request_params.h"

namespace berth::server {

using nlohmann::json;

namespace {

Reader ReaderOf(const Principal& who, const std::string& owner) {
  return who.admin() || who.user == owner ? Reader::kOwnerOrAdmin : Reader::kOther;
}

}  // namespace

int StatusToHttp(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
      return 409;
    case StatusCode::kFailedPrecondition:
      return 409;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kInternal:
      return 500;
  }
  return 500;
}

HttpApi::HttpApi(Controller& controller, Authenticator& authenticator, store::Store& store,
                 const Clock& clock, Metrics& metrics, SubmissionLimits limits,
                 const History& history, core::Duration history_every)
    : controller_(controller),
      authenticator_(authenticator),
      store_(store),
      clock_(clock),
      metrics_(metrics),
      limits_(limits),
      history_(history),
      history_every_(history_every) {
  metrics_.DeclareCounter("berth_api_requests_total", "API requests by route and status code.");
  metrics_.DeclareHistogram("berth_api_request_seconds", "API request latency by route.",
                            {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5});
  metrics_.DeclareGauge("berth_jobs", "Live jobs by state and queue.");
  metrics_.DeclareGauge("berth_gpus", "GPUs by node, type and kind: total, allocated, healthy.");
  metrics_.DeclareGauge("berth_nodes", "Nodes by state: up, draining, down.");
  metrics_.DeclareGauge("berth_queue_usage_gpu_seconds",
                        "Decayed GPU-seconds by queue: the fair-share factor's input.");
  metrics_.DeclareGauge("berth_user_usage_gpu_seconds",
                        "Decayed GPU-seconds by user: the fair-share factor's input.");
  metrics_.DeclareGauge("berth_scheduler_cycles", "Decision cycles run since start.");
}

void HttpApi::Json(http::Response& response, int code, const json& body) {
  response.status = code;
  response.SetContent(body.dump(), "application/json");
}

void HttpApi::Fail(http::Response& response, const Status& status) {
  Json(response, StatusToHttp(status.code()),
       json{{"error", {{"code", StatusCodeName(status.code())}, {"message", status.message()}}}});
}

namespace {

// What a route's admission learned, for its handler.
struct Admitted {
  Principal who;
  std::chrono::steady_clock::time_point start;
};

}  // namespace

Status HttpApi::Allowed(const Principal& who, Access access, const std::string& name) {
  using store::Role;
  if (access == Access::kAgent) {
    if (who.role == Role::kAgent) return Status::Ok();
    return Status(StatusCode::kPermissionDenied, "only agents may call " + name);
  }
  if (who.role == Role::kAgent) {
    return Status(StatusCode::kPermissionDenied, "agent tokens may call only /api/v1/agent/*");
  }
  if (access == Access::kMetrics) {
    if (who.admin() || who.role == Role::kMetrics) return Status::Ok();
    return Status(StatusCode::kPermissionDenied, name + " is for admins and metrics tokens");
  }
  if (who.role == Role::kMetrics) {
    return Status(StatusCode::kPermissionDenied, "metrics tokens may call only /metrics");
  }
  if (access == Access::kAdmin && !who.admin()) {
    return Status(StatusCode::kPermissionDenied, name + " is for admins");
  }
  return Status::Ok();
}

void HttpApi::CountRequest(const std::string& name, int code,
                           std::chrono::steady_clock::time_point start) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  metrics_.Increment("berth_api_requests_total", {{"route", name}, {"code", std::to_string(code)}});
  metrics_.Observe("berth_api_request_seconds", {{"route", name}}, seconds);
}

void HttpApi::Add(http::Router& router, std::string method, const std::string& pattern,
                  const std::string& name, Access access, Handler handler) {
  auto admit = [this, name, access](http::Request& request, http::Response& response) {
    const auto start = std::chrono::steady_clock::now();
    if (gate_) {
      if (Status open = gate_(request.method, access); !open.ok()) {
        Fail(response, open);
        CountRequest(name, response.status, start);
        return false;
      }
    }
    Result<Principal> who = authenticator_.Authenticate(request.Header("Authorization"));
    const Status allowed = who.ok() ? Allowed(*who, access, name) : who.status();
    if (!allowed.ok()) {
      Fail(response, allowed);
      CountRequest(name, response.status, start);
      return false;
    }
    request.context = Admitted{std::move(*who), start};
    return true;
  };
  auto handle = [this, name, handler = std::move(handler)](const http::Request& request,
                                                           http::Response& response) {
    const auto& admitted = std::any_cast<const Admitted&>(request.context);
    handler(admitted.who, request, response);
    CountRequest(name, response.status, admitted.start);
  };
  router.Add(std::move(method), pattern, std::move(handle), std::move(admit),
             access == Access::kAgent ? http::Workers::kReserved : http::Workers::kShared);
}

void HttpApi::Install(http::Router& router, bool public_metrics) {
  // Answers the HTTP server gives itself (no route, a body too large, a
  // malformed request) get the same JSON shape as the API's own.
  router.SetErrorRenderer(
      [](const http::Request&, http::Response& response, const std::string& message) {
        const char* name = response.status == 404   ? "not_found"
                           : response.status >= 500 ? "internal"
                                                    : "invalid_argument";
        response.SetContent(json{{"error", {{"code", name}, {"message", message}}}}.dump(),
                            "application/json");
      });
  router.Get("/healthz", [](const http::Request&, http::Response& response) {
    response.SetContent("ok\n", "text/plain");
  });
  router.Get("/readyz", [this](const http::Request&, http::Response& response) {
    if (!ready_) {
      response.status = 503;
      response.SetContent("recovering\n", "text/plain");
      return;
    }
    response.SetContent("ready\n", "text/plain");
  });
  auto metrics = [this](const http::Request&, http::Response& response) {
    response.SetContent(RenderMetrics(), "text/plain; version=0.0.4");
  };
  if (public_metrics) {
    router.Get("/metrics", metrics);
  } else {
    Add(router, "GET", "/metrics", "/metrics", Access::kMetrics,
        [metrics](const Principal&, const http::Request& request, http::Response& response) {
          metrics(request, response);
        });
  }

  Add(router, "POST", "/api/v1/jobs", "/api/v1/jobs", Access::kUser,
      [this](auto& who, auto& req, auto& res) { SubmitJob(who, req, res); });
  Add(router, "GET", "/api/v1/jobs", "/api/v1/jobs", Access::kUser,
      [this](auto& who, auto& req, auto& res) { ListJobs(who, req, res); });
  Add(router, "GET", R"(/api/v1/jobs/(\d+))", "/api/v1/jobs/{id}", Access::kUser,
      [this](auto& who, auto& req, auto& res) { GetJob(who, req, res); });
  Add(router, "POST", R"(/api/v1/jobs/(\d+)/cancel)", "/api/v1/jobs/{id}/cancel", Access::kUser,
      [this](auto& who, auto& req, auto& res) {
        Result<core::JobId> id = JobIdFrom(req);
        Status status = id.ok() ? controller_.Cancel(who, *id) : id.status();
        if (!status.ok()) return Fail(res, status);
        Json(res, 200, json{{"id", core::Value(*id)}, {"cancelled", true}});
      });
  Add(router, "POST", R"(/api/v1/jobs/(\d+)/release)", "/api/v1/jobs/{id}/release", Access::kUser,
      [this](auto& who, auto& req, auto& res) {
        Result<core::JobId> id = JobIdFrom(req);
        Status status = id.ok() ? controller_.Release(who, *id) : id.status();
        if (!status.ok()) return Fail(res, status);
        Json(res, 200, json{{"id", core::Value(*id)}, {"released", true}});
      });
  // scancel --signal: {"signal": "USR1" | "SIGUSR1" | "10", "batch_only": false}.
  Add(router, "POST", R"(/api/v1/jobs/(\d+)/signal)", "/api/v1/jobs/{id}/signal", Access::kUser,
      [this](auto& who, auto& req, auto& res) {
        Result<core::JobId> id = JobIdFrom(req);
        if (!id.ok()) return Fail(res, id.status());
        Result<SignalBody> body = ReadSignalBody(req);
        if (!body.ok()) return Fail(res, body.status());
        Status status = controller_.Signal(who, *id, body->signal, body->batch_only);
        if (!status.ok()) return Fail(res, status);
        Json(res, 200,
             json{{"id", core::Value(*id)}, {"signal", body->signal}, {"signalled", true}});
      });
  // scontrol requeue: stop the running job and queue it again.
  Add(router, "POST", R"(/api/v1/jobs/(\d+)/requeue)", "/api/v1/jobs/{id}/requeue", Access::kUser,
      [this](auto& who, auto& req, auto& res) {
        Result<core::JobId> id = JobIdFrom(req);
        Status status = id.ok() ? controller_.Requeue(who, *id) : id.status();
        if (!status.ok()) return Fail(res, status);
        Json(res, 200, json{{"id", core::Value(*id)}, {"requeued", true}});
      });
  // The running job saved its work now (its owner or an admin says so).
  Add(router, "POST", R"(/api/v1/jobs/(\d+)/checkpoint)", "/api/v1/jobs/{id}/checkpoint",
      Access::kUser, [this](auto& who, auto& req, auto& res) {
        Result<core::JobId> id = JobIdFrom(req);
        if (!id.ok()) return Fail(res, id.status());
        Result<core::Time> at = controller_.ReportCheckpoint(who, *id);
        if (!at.ok()) return Fail(res, at.status());
        Json(res, 200, json{{"id", core::Value(*id)}, {"last_checkpoint", FormatRfc3339(*at)}});
      });
  // Slurm's scontrol hold and update, for a job that has not started.
  Add(router, "POST", R"(/api/v1/jobs/(\d+)/hold)", "/api/v1/jobs/{id}/hold", Access::kUser,
      [this](auto& who, auto& req, auto& res) {
        Result<core::JobId> id = JobIdFrom(req);
        Status status = id.ok() ? controller_.Hold(who, *id) : id.status();
        if (!status.ok()) return Fail(res, status);
        Json(res, 200, json{{"id", core::Value(*id)}, {"held", true}});
      });
  Add(router, "PATCH", R"(/api/v1/jobs/(\d+))", "/api/v1/jobs/{id}", Access::kUser,
      [this](auto& who, auto& req, auto& res) {
        Result<core::JobId> id = JobIdFrom(req);
        if (!id.ok()) return Fail(res, id.status());
        Result<JobUpdate> update = ParseJobUpdate(req.body, limits_);
        if (!update.ok()) return Fail(res, update.status());
        if (Status status = controller_.Update(who, *id, *update); !status.ok()) {
          return Fail(res, status);
        }
        GetJob(who, req, res);  // the job as it stands now, as GET answers it
      });
  // Job steps (srun inside a running job; job_step.h), the job's owner's.
  Add(router, "POST", R"(/api/v1/jobs/(\d+)/steps)", "/api/v1/jobs/{id}/steps", Access::kUser,
      [this](auto& who, auto& req, auto& res) {
        Result<core::JobId> id = JobIdFrom(req);
        if (!id.ok()) return Fail(res, id.status());
        Result<json> body = Body(req);
        if (!body.ok()) return Fail(res, body.status());
        Result<StepRequest> request = ParseStepRequest(*body);
        if (!request.ok()) return Fail(res, request.status());
        Result<JobStep> step = controller_.LaunchStep(who, *id, std::move(*request));
        if (!step.ok()) return Fail(res, step.status());
        Json(res, 201, StepJson(*id, *step));
      });
  Add(router, "GET", R"(/api/v1/jobs/(\d+)/steps)", "/api/v1/jobs/{id}/steps", Access::kUser,
      [this](auto& who, auto& req, auto& res) {
        Result<core::JobId> id = JobIdFrom(req);
        if (!id.ok()) return Fail(res, id.status());
        Result<std::vector<JobStep>> steps = controller_.ListSteps(who, *id);
        if (!steps.ok()) return Fail(res, steps.status());
        json listed = json::array();
        for (const JobStep& step : *steps) listed.push_back(StepJson(*id, step));
        Json(res, 200, json{{"steps", listed}});
      });
  Add(router, "GET", R"(/api/v1/jobs/(\d+)/steps/(\d+))", "/api/v1/jobs/{id}/steps/{step}",
      Access::kUser, [this](auto& who, auto& req, auto& res) {
        Result<core::JobId> id = JobIdFrom(req);
        Result<int32_t> step = StepIdFrom(req);
        if (!id.ok() || !step.ok()) return Fail(res, id.ok() ? step.status() : id.status());
        Result<JobStep> found = controller_.GetStep(who, *id, *step);
        if (!found.ok()) return Fail(res, found.status());
        Json(res, 200, StepJson(*id, *found));
      });
  Add(router, "POST", R"(/api/v1/jobs/(\d+)/steps/(\d+)/cancel)",
      "/api/v1/jobs/{id}/steps/{step}/cancel", Access::kUser,
      [this](auto& who, auto& req, auto& res) {
        Result<core::JobId> id = JobIdFrom(req);
        Result<int32_t> step = StepIdFrom(req);
        if (!id.ok() || !step.ok()) return Fail(res, id.ok() ? step.status() : id.status());
        Result<JobStep> found = controller_.CancelStep(who, *id, *step);
        if (!found.ok()) return Fail(res, found.status());
        Json(res, 200, StepJson(*id, *found));
      });
  Add(router, "GET", R"(/api/v1/jobs/(\d+)/explain)", "/api/v1/jobs/{id}/explain", Access::kUser,
      [this](auto& who, auto& req, auto& res) {
        Result<core::JobId> id = JobIdFrom(req);
        if (!id.ok()) return Fail(res, id.status());
        Result<Explanation> explanation = controller_.Explain(who, *id);
        if (!explanation.ok()) return Fail(res, explanation.status());
        Json(res, 200, ExplanationJson(*explanation, ReaderOf(who, explanation->job.record.user)));
      });

  Add(router, "GET", R"(/api/v1/jobs/(\d+)/logs)", "/api/v1/jobs/{id}/logs", Access::kUser,
      [this](auto& who, auto& req, auto& res) { JobLogs(who, req, res); });

  Add(router, "GET", "/api/v1/nodes", "/api/v1/nodes", Access::kUser,
      [this](auto& who, auto&, auto& res) {
        Result<std::vector<NodeView>> nodes = controller_.ListNodes(who);
        if (!nodes.ok()) return Fail(res, nodes.status());
        json out = json::array();
        for (const NodeView& node : *nodes) out.push_back(NodeJson(node));
        Json(res, 200, json{{"nodes", out}});
      });
  for (const DrainAction action : {DrainAction::kDrain, DrainAction::kUndrain}) {
    const bool drain = action == DrainAction::kDrain;
    const std::string path = drain ? "drain" : "undrain";
    Add(router, "POST", R"(/api/v1/nodes/([A-Za-z0-9._-]+)/)" + path,
        "/api/v1/nodes/{name}/" + path, Access::kAdmin,
        [this, action, drain](auto& who, auto& req, auto& res) {
          const std::string name = req.matches[1];
          Status status = controller_.SetDrained(who, name, action);
          if (!status.ok()) return Fail(res, status);
          Json(res, 200, json{{"node", name}, {"drained", drain}});
        });
  }

  Add(router, "GET", "/api/v1/queues", "/api/v1/queues", Access::kUser,
      [this](auto& who, auto& req, auto& res) { QueuesReport(who, req, res); });
  Add(router, "PUT", "/api/v1/queues", "/api/v1/queues", Access::kAdmin,
      [this](auto& who, auto& req, auto& res) { PutQueues(who, req, res); });
  Add(router, "GET", "/api/v1/usage", "/api/v1/usage", Access::kUser,
      [this](auto& who, auto& req, auto& res) { UsageReport(who, req, res); });
  Add(router, "GET", "/api/v1/whoami", "/api/v1/whoami", Access::kUser,
      [this](auto& who, auto&, auto& res) {
        Json(res, 200, json{{"user", who.user}, {"role", RoleName(who.role)}});
      });
  Add(router, "GET", "/api/v1/history", "/api/v1/history", Access::kUser,
      [this](auto& who, auto& req, auto& res) { HistoryReport(who, req, res); });
  Add(router, "POST", "/api/v1/tokens", "/api/v1/tokens", Access::kAdmin,
      [this](auto& who, auto& req, auto& res) { CreateToken(who, req, res); });
  Add(router, "GET", "/api/v1/tokens", "/api/v1/tokens", Access::kUser,
      [this](auto& who, auto& req, auto& res) { ListTokens(who, req, res); });
  Add(router, "DELETE", R"(/api/v1/tokens/([A-Za-z0-9_-]+))", "/api/v1/tokens/{id}", Access::kUser,
      [this](auto& who, auto& req, auto& res) { RevokeToken(who, req, res); });

  Add(router, "POST", "/api/v1/agent/register", "/api/v1/agent/register", Access::kAgent,
      [this](auto& who, auto& req, auto& res) {
        Result<json> body = Body(req);
        if (!body.ok()) return Fail(res, body.status());
        Result<NodeRegistration> registration = protocol::ParseRegistration(*body);
        if (!registration.ok()) return Fail(res, registration.status());
        Result<core::Duration> lease = controller_.RegisterNode(who, std::move(*registration));
        if (!lease.ok()) return Fail(res, lease.status());
        Json(res, 200, json{{"registered", true}, {"lease_s", protocol::SecondsJson(*lease)}});
      });
  Add(router, "POST", "/api/v1/agent/heartbeat", "/api/v1/agent/heartbeat", Access::kAgent,
      [this](auto& who, auto& req, auto& res) {
        Result<json> body = Body(req);
        if (!body.ok()) return Fail(res, body.status());
        Result<Heartbeat> heartbeat = protocol::ParseHeartbeat(*body);
        if (!heartbeat.ok()) return Fail(res, heartbeat.status());
        Result<DesiredState> desired = controller_.HandleHeartbeat(who, std::move(*heartbeat));
        if (!desired.ok()) return Fail(res, desired.status());
        Json(res, 200, protocol::DesiredJson(*desired));
      });
}

void HttpApi::SubmitJob(const Principal& who, const http::Request& request,
                        http::Response& response) {
  Result<Submission> submission = ParseSubmission(request.body, limits_);
  if (!submission.ok()) return Fail(response, submission.status());
  if (Status home = AddHomeMounts(who.user, *submission); !home.ok()) return Fail(response, home);
  Result<std::vector<core::JobId>> ids = controller_.Submit(who, std::move(*submission));
  if (!ids.ok()) return Fail(response, ids.status());
  json all = json::array();
  for (core::JobId id : *ids) all.push_back(core::Value(id));
  Json(response, 201, json{{"id", core::Value(ids->front())}, {"ids", all}});
}

// A container's mount_home becomes a mount of the user's home as this
// host's NSS knows it (nodes share one uid space), checked against the
// allow-list like any other mount. Blocks on NSS: outside every lock.
Status HttpApi::AddHomeMounts(const std::string& user, Submission& submission) const {
  for (store::JobRequest& job : submission.jobs) {
    if (!job.container || !job.container->mount_home) continue;
    const Result<UnixAccount> account = LookupUnixAccount(user);
    BERTH_ASSIGN_OR_RETURN(
        job.container,
        WithHomeMount(std::move(*job.container), user, account.ok() ? account->home : std::string(),
                      limits_.container_mounts));
  }
  return Status::Ok();
}

void HttpApi::ListJobs(const Principal& who, const http::Request& request,
                       http::Response& response) {
  Result<JobListQuery> query = ParseJobListQuery(request.params);
  if (!query.ok()) return Fail(response, query.status());
  const store::JobFilter& filter = query->filter;
  Result<std::vector<JobView>> jobs = controller_.ListJobs(who, filter);
  if (!jobs.ok()) return Fail(response, jobs.status());
  std::vector<core::JobId> ids;
  for (const JobView& job : *jobs) ids.push_back(job.record.id);
  const std::map<core::JobId, core::PendingJob> pending = controller_.PendingViews(ids);
  json out = json::array();
  for (const JobView& job : *jobs) {
    auto view = pending.find(job.record.id);
    const Reader reader = ReaderOf(who, job.record.user);
    out.push_back(JobJson(job, reader, view == pending.end() ? nullptr : &view->second));
    // Steps as GET .../steps lists them, to their job's readers only.
    if (query->with_steps && reader == Reader::kOwnerOrAdmin) {
      json steps = json::array();
      for (const JobStep& step : job.record.steps) {
        steps.push_back(StepJson(job.record.id, StepAsSeen(job.record, step)));
      }
      out.back()["steps"] = std::move(steps);
    }
  }
  json body{{"jobs", out}};
  if (static_cast<int32_t>(jobs->size()) == filter.limit && !jobs->empty()) {
    body["next_after"] = core::Value(jobs->back().record.id);
  }
  Json(response, 200, body);
}

void HttpApi::GetJob(const Principal& who, const http::Request& request, http::Response& response) {
  Result<core::JobId> id = JobIdFrom(request);
  if (!id.ok()) return Fail(response, id.status());
  Result<JobView> job = controller_.GetJob(who, *id);
  if (!job.ok()) return Fail(response, job.status());
  const std::map<core::JobId, core::PendingJob> pending =
      controller_.PendingViews({job->record.id});
  auto view = pending.find(job->record.id);
  Json(response, 200,
       JobJson(*job, ReaderOf(who, job->record.user),
               view == pending.end() ? nullptr : &view->second));
}

void HttpApi::UsageReport(const Principal& who, const http::Request& request,
                          http::Response& response) {
  (void)who;
  // The controller's time: the one its runs are labelled with.
  const core::Time now = controller_.Now();
  Result<core::Time> from = TimeParam(request, "from", now - core::Duration::Days(30));
  Result<core::Time> to = TimeParam(request, "to", now);
  if (!from.ok()) return Fail(response, from.status());
  if (!to.ok()) return Fail(response, to.status());
  if (*to <= *from) return Fail(response, InvalidArgument("to: must be after from"));
  // Runs going on count up to now. (A run that ends between the two reads
  // may be counted in both, or in neither until it is written.)
  std::vector<store::UsageRecord> running = controller_.RunningUsage();
  Result<std::vector<store::UsageRecord>> runs = store_.ListUsage(*from, *to);
  if (!runs.ok()) return Fail(response, runs.status());
  runs->insert(runs->end(), running.begin(), running.end());
  std::map<std::string, double> by_user;
  std::map<std::string, double> by_queue;
  for (const store::UsageRecord& run : *runs) {
    const core::Time start = core::Max(run.start, *from);
    const core::Time end = core::Min(run.end, *to);
    if (end <= start) continue;
    const double gpu_hours =
        (end - start).seconds() / 3600.0 * static_cast<double>(run.gpus.value()) / 1000.0;
    by_user[run.user] += gpu_hours;
    by_queue[run.queue] += gpu_hours;
  }
  json users = json::array();
  for (const auto& [user, hours] : by_user) users.push_back({{"user", user}, {"gpu_hours", hours}});
  json queues = json::array();
  for (const auto& [queue, hours] : by_queue) {
    queues.push_back({{"queue", queue}, {"gpu_hours", hours}});
  }
  Json(response, 200,
       json{{"from", from->micros() / 1'000'000},
            {"to", to->micros() / 1'000'000},
            {"by_user", users},
            {"by_queue", queues}});
}

void HttpApi::QueuesReport(const Principal& who, const http::Request& request,
                           http::Response& response) {
  (void)request;
  Result<std::vector<QueueView>> queues = controller_.ListQueues(who);
  if (!queues.ok()) return Fail(response, queues.status());
  json out = json::array();
  for (const QueueView& queue : *queues) {
    json entry{{"name", queue.spec.name},
               {"parent", queue.spec.parent},
               {"guaranteed_gpus", static_cast<double>(queue.spec.guaranteed.value()) / 1000.0},
               {"used_gpus", static_cast<double>(queue.used.value()) / 1000.0},
               {"pending_jobs", queue.pending},
               {"running_jobs", queue.running},
               {"fair_share_usage", queue.fair_share_usage}};
    entry["ceiling_gpus"] = queue.spec.ceiling
                                ? json(static_cast<double>(queue.spec.ceiling->value()) / 1000.0)
                                : json(nullptr);
    entry.update(QueueGovernanceJson(queue.spec));
    out.push_back(entry);
  }
  Json(response, 200, json{{"queues", out}});
}

void HttpApi::PutQueues(const Principal& who, const http::Request& request,
                        http::Response& response) {
  Result<json> body = Body(request);
  if (!body.ok()) return Fail(response, body.status());
  Result<std::vector<core::QueueSpec>> queues = ParseQueues(*body);
  if (!queues.ok()) return Fail(response, queues.status());
  Status status = controller_.SetQueues(who, std::move(*queues));
  if (!status.ok()) return Fail(response, status);
  Json(response, 200, json{{"updated", true}});
}

void HttpApi::HistoryReport(const Principal& who, const http::Request& request,
                            http::Response& response) {
  (void)who;
  // Without `since`: the last hour, what the dashboard's charts start with.
  Result<core::Time> since =
      TimeParam(request, "since", controller_.Now() - core::Duration::Hours(1));
  if (!since.ok()) return Fail(response, since.status());
  json body = HistoryJson(history_.Since(*since), history_every_, history_.capacity());
  // How the first ETAs turned out, since the server started (the dashboard's
  // ETA accuracy; /metrics has the same as berth_eta_*).
  const EtaBook::Accuracy accuracy = controller_.EtaAccuracy();
  body["eta_accuracy"] = json{{"judged", accuracy.judged},
                              {"covered", accuracy.covered},
                              {"kept", accuracy.kept},
                              {"calibrated_on", accuracy.calibrated_on}};
  Json(response, 200, body);
}

// The log lives on the agent that ran the task: fetch the bytes from there
// (the client follows a running task by asking again from the next offset).
void HttpApi::JobLogs(const Principal& who, const http::Request& request,
                      http::Response& response) {
  Result<core::JobId> id = JobIdFrom(request);
  if (!id.ok()) return Fail(response, id.status());
  Result<int64_t> task = IntParam(request, "task", 0, 0, 1 << 20, "a task index");
  if (!task.ok()) return Fail(response, task.status());
  Result<int64_t> offset = IntParam(request, "offset", 0, 0, INT64_MAX, "a byte offset >= 0");
  if (!offset.ok()) return Fail(response, offset.status());
  // A step task's output (job_step.h): `step` and `rank` with the job's
  // task that ran it.
  const bool of_step = request.HasParam("step");
  Result<int64_t> step = IntParam(request, "step", 0, 0, 1 << 20, "a step id");
  if (!step.ok()) return Fail(response, step.status());
  Result<int64_t> rank = IntParam(request, "rank", 0, 0, 1 << 20, "a step task's rank");
  if (!rank.ok()) return Fail(response, rank.status());
  Result<LogLocation> where = controller_.LocateLog(who, *id, static_cast<int32_t>(*task));
  if (!where.ok()) return Fail(response, where.status());
  if (!where->node_up || where->agent.address.empty()) {
    return Fail(response,
                Unavailable("node '" + where->agent.node +
                            "' is down: its logs are unreachable until its agent is back"));
  }
  httplib::Client agent("http://" + where->agent.address);
  agent.set_connection_timeout(std::chrono::seconds(2));
  agent.set_read_timeout(std::chrono::seconds(10));
  agent.set_tcp_nodelay(true);
  const std::string path =
      "/logs?job=" + std::to_string(core::Value(*id)) + "&task=" + std::to_string(*task) +
      "&offset=" + std::to_string(*offset) +
      (of_step ? "&step=" + std::to_string(*step) + "&rank=" + std::to_string(*rank)
               : std::string());
  httplib::Result answer = agent.Get(path, {{"Authorization", "Bearer " + where->agent.key}});
  if (!answer) {
    return Fail(response, Unavailable("the agent of node '" + where->agent.node + "' at " +
                                      where->agent.address +
                                      " did not answer: " + httplib::to_string(answer.error())));
  }
  if (answer->status == 404) {
    return Fail(response, NotFound("no log for task " + std::to_string(*task) + " of job " +
                                   std::to_string(core::Value(*id)) + " on node '" +
                                   where->agent.node + "'"));
  }
  if (answer->status != 200) {
    return Fail(response, Unavailable("the agent of node '" + where->agent.node +
                                      "' answered HTTP " + std::to_string(answer->status)));
  }
  response.status = 200;
  for (const char* header : {"X-Berth-Log-Size", "X-Berth-Task-Running"}) {
    if (answer->has_header(header)) {
      response.SetHeader(header, answer->get_header_value(header));
    }
  }
  response.SetHeader("X-Berth-Node", where->agent.node);
  response.SetContent(answer->body, "text/plain; charset=utf-8");
}

std::string HttpApi::RenderMetrics() {
  const Controller::Stats stats = controller_.GetStats();
  std::map<Labels, double> jobs;
  for (const auto& [key, count] : stats.jobs_by_state_and_queue) {
    jobs[{{"state", key.first}, {"queue", key.second}}] = static_cast<double>(count);
  }
  metrics_.SetGauge("berth_jobs", std::move(jobs));
  std::map<Labels, double> gpus;
  std::map<Labels, double> nodes{{{{"state", "up"}}, 0}, {{{"state", "down"}}, 0}};
  for (const auto& [name, node] : stats.nodes) {
    auto series = [&](const char* kind) {
      return Labels{{"node", name}, {"gpu_type", node.gpu_type}, {"kind", kind}};
    };
    gpus[series("total")] = static_cast<double>(node.total);
    gpus[series("allocated")] = static_cast<double>(node.allocated);
    gpus[series("healthy")] = static_cast<double>(node.healthy);
    ++nodes[{{"state", node.state}}];
  }
  metrics_.SetGauge("berth_gpus", std::move(gpus));
  metrics_.SetGauge("berth_nodes", std::move(nodes));
  std::map<Labels, double> queue_usage;
  for (const auto& [queue, usage] : stats.queue_usage) queue_usage[{{"queue", queue}}] = usage;
  metrics_.SetGauge("berth_queue_usage_gpu_seconds", std::move(queue_usage));
  std::map<Labels, double> user_usage;
  for (const auto& [user, usage] : stats.user_usage) user_usage[{{"user", user}}] = usage;
  metrics_.SetGauge("berth_user_usage_gpu_seconds", std::move(user_usage));
  metrics_.SetGauge("berth_scheduler_cycles", {{{}, static_cast<double>(stats.cycles)}});
  return metrics_.Render();
}

}  // namespace berth::server
