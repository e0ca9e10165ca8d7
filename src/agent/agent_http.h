// The agent's own HTTP endpoint, on the address it registers (--listen):
//
//   GET /logs?job=ID&task=N&offset=BYTES      Authorization: Bearer <logs key>
//       200: the raw bytes of the latest attempt's log from `offset`, at
//            most 1 MiB; headers X-Berth-Log-Size (the log's size now) and
//            X-Berth-Task-Running (1 while it runs, so a follower knows
//            whether to ask again)
//       400: bad parameters; 401: wrong key; 404: no log for that task here
//   POST /wake                                Authorization: Bearer <logs key>
//       204: the agent heartbeats at once (the server has new work for it:
//            a task to start or to stop; see server/agent_waker.h)
//       401: wrong key
//   GET /metrics    Prometheus text: GPU utilization, memory and health,
//                   tasks running (unauthenticated, like the server's)
//   GET /healthz    200 "ok"
//
// The logs key is a random secret the agent makes at start and gives the
// server when it registers; only the server fetches logs, and it proxies
// them to users after its own authorization.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "common/status.h"
#include "http/server.h"

namespace berth::agent {

inline constexpr size_t kMaxLogChunk = 1 << 20;

struct LogsReply {
  int status = 200;
  std::string body;
  std::map<std::string, std::string> headers;
};

// The /logs logic without HTTP: `authorization` is the header's value,
// `params` the query parameters.
LogsReply ServeLogs(const std::string& tasks_dir, const std::string& logs_key,
                    const std::string& authorization,
                    const std::multimap<std::string, std::string>& params);

// 64 hex characters from /dev/urandom.
Result<std::string> RandomSecret();

class AgentHttp {
 public:
  struct Options {
    std::string host = "127.0.0.1";
    int port = 0;  // 0: any free port
    std::string tasks_dir;
    std::string logs_key;
    std::function<std::string()> metrics;  // the /metrics body
    std::function<void()> wake;            // POST /wake (the server: new work)
  };

  // Binds and starts serving on a thread of its own.
  static Result<std::unique_ptr<AgentHttp>> Start(Options options);
  ~AgentHttp();
  AgentHttp(const AgentHttp&) = delete;
  AgentHttp& operator=(const AgentHttp&) = delete;

  int port() const { return server_->port(); }
  void Stop();

 private:
  AgentHttp() = default;

  Options options_;
  std::unique_ptr<http::Server> server_;
};

}  // namespace berth::agent
