// Which handler answers a request: routes by method and a regular
// expression on the whole path (its groups reach the handler as
// Request::matches). Each route may admit or refuse a request from its head
// alone, before its body is read (a token check), and may run on the
// server's reserved workers, which no other traffic can occupy.
#pragma once

#include <functional>
#include <regex>
#include <string>
#include <vector>

#include "http/message.h"

namespace berth::http {

using Handler = std::function<void(const Request&, Response&)>;
// Sees the request without its body. Returns false to answer at once with
// `response` (the body is then never read); may leave what it learned in
// Request::context for the handler.
using Admit = std::function<bool(Request&, Response&)>;
// Fills the body of an answer the server gives itself (no route, a method
// the path does not take, a body too large, a malformed request).
using ErrorRenderer = std::function<void(const Request&, Response&, const std::string& message)>;

enum class Workers { kShared, kReserved };

struct Route {
  std::string method;
  std::string literal;  // the pattern when it has no regex syntax: compared as is
  std::regex pattern;
  Handler handle;
  Admit admit;  // none: every request is admitted
  Workers workers = Workers::kShared;
};

class Router {
 public:
  void Add(std::string method, const std::string& pattern, Handler handle, Admit admit = {},
           Workers workers = Workers::kShared);
  void Get(const std::string& pattern, Handler handle, Admit admit = {}) {
    Add("GET", pattern, std::move(handle), std::move(admit));
  }
  void Post(const std::string& pattern, Handler handle, Admit admit = {}) {
    Add("POST", pattern, std::move(handle), std::move(admit));
  }
  void SetErrorRenderer(ErrorRenderer render) { render_error_ = std::move(render); }

  struct Found {
    const Route* route = nullptr;  // null: no route for this method and path
    bool path_known = false;       // another method takes this path (405, not 404)
  };
  // Fills request.matches when a route is found.
  Found Find(Request& request) const;

  // An answer of the server's own: `status`, and a body from the renderer
  // (plain text without one).
  void RenderError(const Request& request, Response& response, int status,
                   const std::string& message) const;

 private:
  std::vector<Route> routes_;
  ErrorRenderer render_error_;
};

}  // namespace berth::http
