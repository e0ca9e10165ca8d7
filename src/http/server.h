// An event-driven HTTP/1.1 server (Boost.Beast on Asio) for clients that
// may be slow, idle or hostile. An I/O thread holds every connection;
// handlers run on a pool of workers, so a connection costs a socket and a
// buffer, not a thread, whatever its client does:
//
//   accept     over the limit in total or for the client's address: a 503
//              and the connection is closed
//   head       must arrive whole within header_timeout (idle_timeout on a
//              kept-alive connection), within max_header_bytes (else 431)
//   admit      the route's check of the head (a token) runs before a byte
//              of the body is read; a refused request is answered and its
//              connection closed
//   body       read as it streams, chunked or not, up to max_body_bytes
//              (413 as soon as it is past) within body_timeout; exactly one
//              Content-Length (400 otherwise); no length on a request means
//              an empty body (RFC 9112 6.3)
//   handle     on a worker: the shared pool, or the reserved one for routes
//              that must never wait behind other traffic (agents)
//
// docs/architecture.md says why Beast.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "common/status.h"
#include "http/router.h"

namespace berth::http {

struct Limits {
  size_t max_connections = 8192;
  // Users behind one login node or NAT share an address: generous.
  size_t max_connections_per_address = 2048;
  size_t max_header_bytes = 16 * 1024;
  size_t max_body_bytes = 1 << 20;
  std::chrono::milliseconds header_timeout{10'000};
  std::chrono::milliseconds idle_timeout{60'000};
  std::chrono::milliseconds body_timeout{30'000};
  std::chrono::milliseconds write_timeout{30'000};
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: any free port
  // Both set: HTTPS (PEM files).
  std::string tls_cert;
  std::string tls_key;
  Limits limits;
  // One is enough for tens of thousands of connections: it only parses and
  // copies; a second cost more kernel time than it saved (two vCPUs,
  // docs/performance.md, "HTTP layer").
  int io_threads = 1;
  int workers = 16;
  int reserved_workers = 2;   // for routes marked Workers::kReserved
  std::string name = "http";  // in log lines
};

class Server {
 public:
  // Binds and serves on threads of its own until Stop().
  static Result<std::unique_ptr<Server>> Start(ServerOptions options, Router router);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  int port() const;
  // Connections open now.
  size_t connections() const;
  // Stops accepting, closes every connection and joins the threads; a
  // handler already running finishes first.
  void Stop();

  class Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace berth::http
