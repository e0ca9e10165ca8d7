#include "http/server.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/url/parse.hpp>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "common/printable.h"

namespace berth::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace wire = boost::beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

// What a refused connection is told before it is closed.
constexpr std::string_view kBusy =
    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 41\r\n"
    "Connection: close\r\n\r\ntoo many connections: try again later\r\n\r\n";

// After an answer that closes the connection, what the client may still be
// sending is read and dropped for a while, so that closing does not reset
// the connection before the client has read the answer: most clients send
// a whole body before they read (a refused 2 MiB submit, say). Bounded in
// time and bytes, and it holds no memory but one small buffer.
constexpr std::chrono::milliseconds kLingerTime{2000};
constexpr size_t kLingerBytes = 4 << 20;

// How much of a path without a route its 404 or 405 repeats.
constexpr size_t kMaxPathInAnswer = 256;

// Descriptors kept beside the connections: the store, logs, agents' tasks.
constexpr rlim_t kSpareDescriptors = 512;

// A body announced no larger than this is read before the route's admission
// runs, which then shares the handler's turn on a worker: reading it costs
// less than the two extra hand-overs between threads. Larger bodies,
// chunked ones and a client waiting for "100 Continue" are admitted first.
constexpr uint64_t kReadBeforeAdmission = 64 * 1024;

// Raises this process's open-file limit to what `connections` need (up to
// the hard limit), and returns how many connections it allows.
size_t ReserveDescriptors(size_t connections) {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return connections;
  const rlim_t wanted = static_cast<rlim_t>(connections) + kSpareDescriptors;
  if (limit.rlim_cur < wanted) {
    limit.rlim_cur = std::min(wanted, limit.rlim_max);
    ::setrlimit(RLIMIT_NOFILE, &limit);
    ::getrlimit(RLIMIT_NOFILE, &limit);
  }
  if (limit.rlim_cur >= wanted) return connections;
  const rlim_t usable = limit.rlim_cur > 2 * kSpareDescriptors ? limit.rlim_cur - kSpareDescriptors
                                                               : limit.rlim_cur / 2;
  return static_cast<size_t>(usable);
}

}  // namespace

class Server::Impl {
 public:
  Impl(ServerOptions options, Router router)
      : options_(std::move(options)),
        router_(std::move(router)),
        shared_workers_(static_cast<size_t>(std::max(options_.workers, 1))),
        reserved_workers_(static_cast<size_t>(std::max(options_.reserved_workers, 1))) {}

  Status Listen();
  void Run();
  void Stop();
  int port() const { return port_; }
  size_t connections() const {
    std::lock_guard lock(mutex_);
    return total_;
  }

  const ServerOptions& options() const { return options_; }
  const Router& router() const { return router_; }
  asio::thread_pool& workers(Workers which) {
    return which == Workers::kReserved ? reserved_workers_ : shared_workers_;
  }

  // A connection's place in the limits, given back when it closes.
  class Slot {
   public:
    Slot(Impl* impl, std::string address) : impl_(impl), address_(std::move(address)) {}
    Slot(Slot&& other) noexcept
        : impl_(std::exchange(other.impl_, nullptr)), address_(std::move(other.address_)) {}
    Slot& operator=(Slot&&) = delete;
    ~Slot() {
      if (impl_ != nullptr) impl_->Release(address_);
    }
    const std::string& address() const { return address_; }

   private:
    Impl* impl_;
    std::string address_;
  };

 private:
  void Accept();
  void OnAccept(tcp::socket socket);
  std::optional<Slot> TakeSlot(const std::string& address);
  void Release(const std::string& address);
  void Refuse(tcp::socket& socket, const std::string& address);

  ServerOptions options_;
  Router router_;
  mutable std::mutex mutex_;
  size_t total_ = 0;
  std::map<std::string, size_t> per_address_;
  size_t refused_since_log_ = 0;
  std::chrono::steady_clock::time_point last_refusal_log_{};
  std::optional<asio::ssl::context> tls_;
  // Destroyed before everything above: the connections it still holds give
  // their slots back.
  asio::io_context io_;
  tcp::acceptor acceptor_{io_};
  asio::steady_timer accept_retry_{io_};
  asio::thread_pool shared_workers_;
  asio::thread_pool reserved_workers_;
  std::vector<std::thread> io_threads_;
  int port_ = 0;
  std::atomic<bool> stopped_{false};
};

namespace {

// One connection: reads requests one after another, each answered before
// the next is read (no pipelining in flight).
template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(Server::Impl& server, Stream stream, Server::Impl::Slot slot)
      : server_(server), stream_(std::move(stream)), slot_(std::move(slot)) {}

  void Start() {
    if constexpr (kTls) {
      Lowest().expires_after(server_.options().limits.header_timeout);
      stream_.async_handshake(asio::ssl::stream_base::server,
                              [self = this->shared_from_this()](error_code error) {
                                if (error) return self->Drop();
                                self->ReadHead(self->server_.options().limits.header_timeout);
                              });
    } else {
      ReadHead(server_.options().limits.header_timeout);
    }
  }

 private:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }
  const Limits& limits() const { return server_.options().limits; }

  void ReadHead(std::chrono::milliseconds timeout) {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(limits().max_header_bytes));
    parser_->body_limit(limits().max_body_bytes);
    request_ = Request{};
    route_ = nullptr;
    Lowest().expires_after(timeout);
    wire::async_read_header(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](error_code error, size_t) { self->OnHead(error); });
  }

  void OnHead(error_code error) {
    if (error == wire::error::header_limit) {
      return Answer(431,
                    "headers: larger than " + std::to_string(limits().max_header_bytes) + " bytes",
                    /*keep_alive=*/false);
    }
    if (error == wire::error::body_limit) {  // a Content-Length past the limit
      return Answer(413, "body: larger than " + std::to_string(limits().max_body_bytes) + " bytes",
                    false);
    }
    if (error == wire::error::bad_content_length || error == wire::error::multiple_content_length) {
      return Answer(400, "Content-Length: exactly one valid length is allowed", false);
    }
    if (error == beast::error::timeout || error == wire::error::end_of_stream ||
        error == asio::error::eof || error == asio::error::connection_reset ||
        error == asio::error::operation_aborted) {
      return Drop();
    }
    if (error) return Answer(400, "malformed HTTP request: " + error.message(), false);

    const auto& head = parser_->get();
    version_ = head.version();
    request_.method = std::string(head.method_string());
    request_.target = std::string(head.target());
    request_.remote_address = slot_.address();
    int lengths = 0;
    for (const auto& field : head) {
      request_.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
      if (field.name() == wire::field::content_length) ++lengths;
    }
    // Beast accepts a repeated length of the same value (RFC 9112 lets a
    // recipient do so); a proxy in front may read the request differently,
    // so only one is taken.
    if (lengths > 1 || head[wire::field::content_length].find(',') != beast::string_view::npos) {
      return Answer(400, "Content-Length: exactly one valid length is allowed", false);
    }
    auto url = boost::urls::parse_origin_form(head.target());
    if (!url) return Answer(400, "malformed request target: " + request_.target, false);
    request_.path = std::string(url->path());
    for (const auto& param : url->params()) {
      request_.params.emplace(std::string(param.key), std::string(param.value));
    }
    const Router::Found found = server_.router().Find(request_);
    // Answered without reading the body: the connection stays open only
    // when there is no body to skip.
    const bool keep_alive = head.keep_alive() && parser_->is_done();
    if (found.route == nullptr) {
      // The decoded path may hold any bytes; the answer quotes it escaped.
      const std::string path = Printable(request_.path, kMaxPathInAnswer);
      return found.path_known
                 ? Answer(405, request_.method + " is not allowed on " + path, keep_alive)
                 : Answer(404, "no route " + request_.method + " " + path, keep_alive);
    }
    route_ = found.route;
    admitted_ = !route_->admit;
    const bool small = !parser_->chunked() && parser_->content_length() &&
                       *parser_->content_length() <= kReadBeforeAdmission &&
                       !beast::iequals(head[wire::field::expect], "100-continue");
    if (admitted_ || small) return ReadBody();
    asio::post(server_.workers(route_->workers), [self = this->shared_from_this(), keep_alive] {
      Response response;
      const bool admitted = self->route_->admit(self->request_, response);
      asio::post(self->stream_.get_executor(),
                 [self, admitted, keep_alive, response = std::move(response)]() mutable {
                   if (!admitted) return self->Write(std::move(response), keep_alive);
                   self->admitted_ = true;
                   self->ReadBody();
                 });
    });
  }

  void ReadBody() {
    if (parser_->is_done()) return Handle();
    if (beast::iequals(parser_->get()[wire::field::expect], "100-continue")) {
      // The client waits for this before it sends the body.
      auto proceed =
          std::make_shared<wire::response<wire::empty_body>>(wire::status::continue_, version_);
      Lowest().expires_after(limits().write_timeout);
      return wire::async_write(
          stream_, *proceed, [self = this->shared_from_this(), proceed](error_code error, size_t) {
            if (error) return self->Drop();
            self->ReadRestOfBody();
          });
    }
    ReadRestOfBody();
  }

  void ReadRestOfBody() {
    Lowest().expires_after(limits().body_timeout);
    wire::async_read(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](error_code error, size_t) { self->OnBody(error); });
  }

  void OnBody(error_code error) {
    if (error == wire::error::body_limit) {
      return Answer(413, "body: larger than " + std::to_string(limits().max_body_bytes) + " bytes",
                    false);
    }
    if (error == beast::error::timeout || error == wire::error::end_of_stream ||
        error == asio::error::eof || error == asio::error::connection_reset) {
      return Drop();
    }
    if (error) return Answer(400, "malformed HTTP request body: " + error.message(), false);
    Handle();
  }

  void Handle() {
    request_.body = std::move(parser_->get().body());
    const bool keep_alive = parser_->get().keep_alive();
    asio::post(server_.workers(route_->workers), [self = this->shared_from_this(), keep_alive] {
      Response response;
      try {
        if (self->admitted_ || self->route_->admit(self->request_, response)) {
          self->route_->handle(self->request_, response);
        }
      } catch (const std::exception& failure) {
        spdlog::error("{}: {} {} failed: {}", self->server_.options().name, self->request_.method,
                      self->request_.path, failure.what());
        self->server_.router().RenderError(self->request_, response, 500, "internal error");
      }
      asio::post(self->stream_.get_executor(),
                 [self, keep_alive, response = std::move(response)]() mutable {
                   self->Write(std::move(response), keep_alive);
                 });
    });
  }

  // An answer of the server's own.
  void Answer(int status, const std::string& message, bool keep_alive) {
    Response response;
    server_.router().RenderError(request_, response, status, message);
    Write(std::move(response), keep_alive);
  }

  void Write(Response response, bool keep_alive) {
    out_ = {};
    out_.version(version_);
    out_.result(static_cast<unsigned>(response.status));
    if (!response.content_type.empty()) out_.set(wire::field::content_type, response.content_type);
    for (auto& [name, value] : response.headers) out_.insert(name, value);
    out_.body() = std::move(response.body);
    out_.keep_alive(keep_alive);
    out_.prepare_payload();
    Lowest().expires_after(limits().write_timeout);
    wire::async_write(stream_, out_,
                      [self = this->shared_from_this(), keep_alive](error_code error, size_t) {
                        if (error) return self->Drop();
                        if (!keep_alive) return self->Linger();
                        self->ReadHead(self->limits().idle_timeout);
                      });
  }

  // Closes gracefully: no more to send, and what the client still sends is
  // read and dropped for a moment (kLingerTime).
  void Linger() {
    error_code ignored;
    if constexpr (kTls) {
      Lowest().expires_after(kLingerTime);
      stream_.async_shutdown([self = this->shared_from_this()](error_code) { self->Drop(); });
    } else {
      Lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
      Lowest().expires_after(kLingerTime);
      Discard();
    }
  }

  void Discard() {
    Lowest().async_read_some(asio::buffer(discard_),
                             [self = this->shared_from_this()](error_code error, size_t got) {
                               self->discarded_ += got;
                               if (error || self->discarded_ > kLingerBytes) return self->Drop();
                               self->Discard();
                             });
  }

  void Drop() {
    error_code ignored;
    Lowest().socket().close(ignored);
  }

  Server::Impl& server_;
  Stream stream_;
  Server::Impl::Slot slot_;
  beast::flat_buffer buffer_;
  std::optional<wire::request_parser<wire::string_body>> parser_;
  Request request_;
  const Route* route_ = nullptr;
  bool admitted_ = false;  // the route's admission passed (or it has none)
  unsigned version_ = 11;
  wire::response<wire::string_body> out_;
  std::array<char, 16 * 1024> discard_{};
  size_t discarded_ = 0;
};

}  // namespace

Status Server::Impl::Listen() {
  if (!options_.tls_cert.empty() || !options_.tls_key.empty()) {
    tls_.emplace(asio::ssl::context::tls_server);
    error_code error;
    tls_->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                      asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                      asio::ssl::context::no_tlsv1_1);
    tls_->use_certificate_chain_file(options_.tls_cert, error);
    if (!error) tls_->use_private_key_file(options_.tls_key, asio::ssl::context::pem, error);
    if (error)
      return InvalidArgument("tls: cannot load the certificate or key: " + error.message());
  }
  const size_t allowed = ReserveDescriptors(options_.limits.max_connections);
  if (allowed < options_.limits.max_connections) {
    spdlog::warn("{}: the open-file limit allows {} connections, not {}", options_.name, allowed,
                 options_.limits.max_connections);
    options_.limits.max_connections = allowed;
  }
  error_code error;
  const auto address = asio::ip::make_address(options_.host, error);
  tcp::endpoint endpoint;
  if (!error) {
    endpoint = tcp::endpoint(address, static_cast<unsigned short>(options_.port));
  } else {
    // A host name: its first address.
    tcp::resolver resolver(io_);
    auto found = resolver.resolve(options_.host, std::to_string(options_.port), error);
    if (error || found.empty()) {
      return Unavailable("listen: cannot resolve " + options_.host + ": " + error.message());
    }
    endpoint = found.begin()->endpoint();
  }
  const std::string where = options_.host + ":" + std::to_string(options_.port);
  acceptor_.open(endpoint.protocol(), error);
  // Not SO_REUSEPORT: a second server on the same port must fail to bind.
  if (!error) acceptor_.set_option(asio::socket_base::reuse_address(true), error);
  if (!error) acceptor_.bind(endpoint, error);
  if (!error) acceptor_.listen(asio::socket_base::max_listen_connections, error);
  if (error) return Unavailable("listen: cannot bind " + where + ": " + error.message());
  port_ = acceptor_.local_endpoint().port();
  return Status::Ok();
}

void Server::Impl::Run() {
  Accept();
  const int threads = std::max(options_.io_threads, 1);
  for (int i = 0; i < threads; ++i) io_threads_.emplace_back([this] { io_.run(); });
}

void Server::Impl::Accept() {
  acceptor_.async_accept(asio::make_strand(io_), [this](error_code error, tcp::socket socket) {
    if (error == asio::error::operation_aborted || stopped_) return;
    if (error) {
      // Out of descriptors (EMFILE) or the like: pause rather than spin.
      spdlog::warn("{}: accept failed: {}", options_.name, error.message());
      accept_retry_.expires_after(std::chrono::milliseconds(100));
      accept_retry_.async_wait([this](error_code waited) {
        if (!waited) Accept();
      });
      return;
    }
    OnAccept(std::move(socket));
    Accept();
  });
}

void Server::Impl::OnAccept(tcp::socket socket) {
  error_code error;
  const tcp::endpoint peer = socket.remote_endpoint(error);
  if (error) return;
  const std::string address = peer.address().to_string();
  std::optional<Slot> slot = TakeSlot(address);
  if (!slot) return Refuse(socket, address);
  // Small answers go out without waiting for the client's delayed ACK.
  socket.set_option(tcp::no_delay(true), error);
  beast::tcp_stream stream(std::move(socket));
  if (tls_) {
    using TlsStream = beast::ssl_stream<beast::tcp_stream>;
    std::make_shared<Session<TlsStream>>(*this, TlsStream(std::move(stream), *tls_),
                                         std::move(*slot))
        ->Start();
  } else {
    std::make_shared<Session<beast::tcp_stream>>(*this, std::move(stream), std::move(*slot))
        ->Start();
  }
}

std::optional<Server::Impl::Slot> Server::Impl::TakeSlot(const std::string& address) {
  std::lock_guard lock(mutex_);
  size_t& mine = per_address_[address];
  if (total_ >= options_.limits.max_connections ||
      mine >= options_.limits.max_connections_per_address) {
    if (mine == 0) per_address_.erase(address);
    return std::nullopt;
  }
  ++mine;
  ++total_;
  return Slot(this, address);
}

void Server::Impl::Release(const std::string& address) {
  std::lock_guard lock(mutex_);
  --total_;
  auto it = per_address_.find(address);
  if (it != per_address_.end() && --it->second == 0) per_address_.erase(it);
}

void Server::Impl::Refuse(tcp::socket& socket, const std::string& address) {
  error_code ignored;
  // A fresh socket's send buffer takes these few bytes at once; a client
  // that cannot take them is not waited for.
  socket.non_blocking(true, ignored);
  socket.write_some(asio::buffer(kBusy.data(), kBusy.size()), ignored);
  socket.close(ignored);
  std::lock_guard lock(mutex_);
  ++refused_since_log_;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_refusal_log_ > std::chrono::seconds(10)) {
    spdlog::warn(
        "{}: refused {} connection(s) over the limits ({} in total, {} per address; "
        "the latest from {})",
        options_.name, refused_since_log_, options_.limits.max_connections,
        options_.limits.max_connections_per_address, address);
    refused_since_log_ = 0;
    last_refusal_log_ = now;
  }
}

void Server::Impl::Stop() {
  if (stopped_.exchange(true)) return;
  // Handlers running now finish; their answers are not written.
  shared_workers_.stop();
  reserved_workers_.stop();
  io_.stop();
  for (std::thread& thread : io_threads_) thread.join();
  shared_workers_.join();
  reserved_workers_.join();
  // No thread runs the loop any more: the port is free from here.
  error_code ignored;
  acceptor_.close(ignored);
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<Server>> Server::Start(ServerOptions options, Router router) {
  auto impl = std::make_unique<Impl>(std::move(options), std::move(router));
  BERTH_RETURN_IF_ERROR(impl->Listen());
  impl->Run();
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Server::~Server() { Stop(); }

int Server::port() const { return impl_->port(); }

size_t Server::connections() const { return impl_->connections(); }

void Server::Stop() { impl_->Stop(); }

}  // namespace berth::http
