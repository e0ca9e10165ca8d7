// An HTTP request as a route's handler sees it, and the response it fills.
// Plain values: the transport (server.h) reads and writes the wire.
#pragma once

#include <any>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace berth::http {

struct Request {
  std::string method;                                        // "GET", "POST", ...
  std::string target;                                        // as sent: path and query
  std::string path;                                          // decoded, without the query
  std::vector<std::pair<std::string, std::string>> headers;  // as sent, in order
  std::multimap<std::string, std::string> params;            // the decoded query
  // The route pattern's match: [0] the whole path, then its groups.
  std::vector<std::string> matches;
  std::string body;
  std::string remote_address;  // the client's IP address
  // What the route's admission step (Route::admit) learned for its handler,
  // such as the authenticated caller.
  std::any context;

  // The first header of that name (case-insensitive), or "" without one.
  std::string Header(std::string_view name) const;
  bool HasParam(const std::string& key) const { return params.contains(key); }
  // The first value of a query parameter, or "" without one.
  std::string Param(const std::string& key) const;
};

struct Response {
  int status = 200;
  std::string body;
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> headers;

  void SetContent(std::string content, std::string type) {
    body = std::move(content);
    content_type = std::move(type);
  }
  void SetHeader(std::string name, std::string value) {
    headers.emplace_back(std::move(name), std::move(value));
  }
};

}  // namespace berth::http
