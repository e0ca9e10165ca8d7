#include "agent/agent_http.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <fstream>

#include "agent/step_files.h"
#include "agent/task_dir.h"

namespace berth::agent {
namespace {

// Compares without an early exit, so the time taken says nothing about how
// much of a guessed key was right.
bool SameSecret(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char difference = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    difference |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return difference == 0;
}

struct OpenOutput {
  int fd = -1;
  int64_t size = 0;
};

// What `berth logs` shows of a task: its --output file when the job named
// one, else its log. That path is the user's to choose and the agent reads
// as root, so the file is served only while it is a regular file of the
// task's user (checked on the open file: a symlink swapped in is caught).
// A step task's output (step_files.h) instead when `step` is given.
Result<OpenOutput> OpenTaskOutput(const std::string& dir, const std::optional<StepTaskName>& step) {
  std::string path = dir + "/" + task_files::kLog;
  std::optional<uint32_t> owner;
  if (Result<std::string> text = ReadWholeFile(dir + "/" + task_files::kSpec); text.ok()) {
    Result<TaskSpec> spec = ParseTaskSpec(*text);
    if (step && spec.ok()) {
      path = StepFile(dir, *step, ".out");
      owner = spec->run_as ? spec->run_as->uid : ::geteuid();
    } else if (spec.ok() && !spec->output_path.empty()) {
      path = spec->output_path;
      owner = spec->run_as ? spec->run_as->uid : ::geteuid();
    }
  }
  // Non-blocking: a FIFO by that name must not hang the endpoint.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return NotFound("cannot open " + path);
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode) || (owner && status.st_uid != *owner)) {
    ::close(fd);
    return Status(StatusCode::kPermissionDenied,
                  "the output file " + path + " is not a regular file of the task's user");
  }
  return OpenOutput{fd, static_cast<int64_t>(status.st_size)};
}

bool ParseNumber(const std::multimap<std::string, std::string>& params, const std::string& name,
                 int64_t& out) {
  auto it = params.find(name);
  if (it == params.end()) return false;
  const std::string& text = it->second;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size() && out >= 0;
}

// `authorization` is "Bearer <key>" with the agent's key.
bool Authorized(const std::string& key, const std::string& authorization) {
  const std::string prefix = "Bearer ";
  return !key.empty() && authorization.rfind(prefix, 0) == 0 &&
         SameSecret(authorization.substr(prefix.size()), key);
}

LogsReply Error(int status, const std::string& message) {
  LogsReply reply;
  reply.status = status;
  reply.body = message + "\n";
  return reply;
}

}  // namespace

LogsReply ServeLogs(const std::string& tasks_dir, const std::string& logs_key,
                    const std::string& authorization,
                    const std::multimap<std::string, std::string>& params) {
  if (!Authorized(logs_key, authorization)) return Error(401, "wrong or missing logs key");
  int64_t job = 0;
  int64_t task = 0;
  int64_t offset = 0;
  if (!ParseNumber(params, "job", job) || job < 1) {
    return Error(400, "job: expected a job id");
  }
  if (!ParseNumber(params, "task", task) || task > INT32_MAX) {
    return Error(400, "task: expected a task index");
  }
  if (params.contains("offset") && !ParseNumber(params, "offset", offset)) {
    return Error(400, "offset: expected a byte offset");
  }
  std::optional<StepTaskName> step;
  if (params.contains("step")) {
    int64_t id = 0;
    int64_t rank = 0;
    if (!ParseNumber(params, "step", id) || !ParseNumber(params, "rank", rank) || id > INT32_MAX ||
        rank > INT32_MAX) {
      return Error(400, "step, rank: expected a step id and a step task's rank");
    }
    step = StepTaskName{static_cast<int32_t>(id), static_cast<int32_t>(rank)};
  }
  std::optional<std::string> dir =
      LatestTaskDir(tasks_dir, static_cast<core::JobId>(job), static_cast<int32_t>(task));
  if (!dir)
    return Error(404, "no log for job " + std::to_string(job) + " task " + std::to_string(task) +
                          " on this node");
  // The running flag is read before the size: a task that ends in between
  // is reported running, and the follower asks once more and gets the rest.
  const bool running = step ? !FileExists(StepFile(*dir, *step, ".exit")) &&
                                  !FileExists(*dir + "/" + task_files::kExit)
                            : !FileExists(*dir + "/" + task_files::kExit);
  const std::string missing =
      "no log for job " + std::to_string(job) + " task " + std::to_string(task) + " on this node";
  LogsReply reply;
  reply.headers["X-Berth-Task-Running"] = running ? "1" : "0";
  Result<OpenOutput> output = OpenTaskOutput(*dir, step);
  if (!output.ok() && output.status().code() == StatusCode::kNotFound && running) {
    reply.headers["X-Berth-Log-Size"] = "0";  // its --output file is not made yet
    return reply;
  }
  if (!output.ok()) {
    return Error(
        output.status().code() == StatusCode::kNotFound ? 404 : 403,
        output.status().code() == StatusCode::kNotFound ? missing : output.status().message());
  }
  const int64_t size = output->size;
  reply.headers["X-Berth-Log-Size"] = std::to_string(size);
  if (offset < size) {
    const auto length = static_cast<size_t>(std::min<int64_t>(size - offset, kMaxLogChunk));
    reply.body.resize(length);
    const ssize_t got = ::pread(output->fd, reply.body.data(), length, offset);
    reply.body.resize(got > 0 ? static_cast<size_t>(got) : 0);
  }
  ::close(output->fd);
  return reply;
}

Result<std::string> RandomSecret() {
  std::ifstream random("/dev/urandom", std::ios::binary);
  unsigned char bytes[32];
  if (!random.read(reinterpret_cast<char*>(bytes), sizeof(bytes))) {
    return Unavailable("cannot read /dev/urandom");
  }
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char byte : bytes) {
    out += kHex[byte >> 4];
    out += kHex[byte & 15];
  }
  return out;
}

Result<std::unique_ptr<AgentHttp>> AgentHttp::Start(Options options) {
  std::unique_ptr<AgentHttp> agent_http(new AgentHttp());
  agent_http->options_ = std::move(options);
  const Options& o = agent_http->options_;
  http::Router router;
  router.Get("/healthz", [](const http::Request&, http::Response& response) {
    response.SetContent("ok\n", "text/plain");
  });
  router.Get("/metrics", [&o](const http::Request&, http::Response& response) {
    response.SetContent(o.metrics ? o.metrics() : std::string(), "text/plain; version=0.0.4");
  });
  auto keyed = [&o](http::Request& request, http::Response& response) {
    if (Authorized(o.logs_key, request.Header("Authorization"))) return true;
    response.status = 401;
    response.SetContent("wrong or missing key\n", "text/plain");
    return false;
  };
  // The server's wake-ups never wait behind log reads.
  router.Add(
      "POST", "/wake",
      [&o](const http::Request&, http::Response& response) {
        if (o.wake) o.wake();
        response.status = 204;
      },
      keyed, http::Workers::kReserved);
  router.Get("/logs", [&o](const http::Request& request, http::Response& response) {
    LogsReply reply =
        ServeLogs(o.tasks_dir, o.logs_key, request.Header("Authorization"), request.params);
    response.status = reply.status;
    for (const auto& [name, value] : reply.headers) response.SetHeader(name, value);
    response.SetContent(std::move(reply.body),
                        reply.status == 200 ? "application/octet-stream" : "text/plain");
  });
  http::ServerOptions server;
  server.host = o.host;
  server.port = o.port;
  // Only the server calls it, and Prometheus: a few connections.
  server.workers = 4;
  server.reserved_workers = 1;
  server.limits.max_connections = 1024;
  server.limits.max_body_bytes = 4096;
  server.name = "berth agent";
  Result<std::unique_ptr<http::Server>> started =
      http::Server::Start(std::move(server), std::move(router));
  if (!started.ok()) {
    return Unavailable("--listen: cannot bind " + o.host + ":" + std::to_string(o.port) + ": " +
                       started.status().message());
  }
  agent_http->server_ = std::move(*started);
  return agent_http;
}

AgentHttp::~AgentHttp() { Stop(); }

void AgentHttp::Stop() {
  if (server_) server_->Stop();
}

}  // namespace berth::agent
