#include "http/router.h"

#include <strings.h>

namespace berth::http {
namespace {

bool SameName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ::strncasecmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

std::string Request::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (SameName(key, name)) return value;
  }
  return "";
}

std::string Request::Param(const std::string& key) const {
  auto it = params.find(key);
  return it == params.end() ? "" : it->second;
}

void Router::Add(std::string method, const std::string& pattern, Handler handle, Admit admit,
                 Workers workers) {
  const bool literal = pattern.find_first_of(R"(\.^$|()[]{}*+?)") == std::string::npos;
  routes_.push_back(Route{std::move(method), literal ? pattern : "",
                          std::regex(pattern, std::regex::ECMAScript), std::move(handle),
                          std::move(admit), workers});
}

namespace {

// Whether `route`'s pattern matches the whole path; fills `match` for a
// regular expression.
bool Matches(const Route& route, const std::string& path, std::smatch& match) {
  if (!route.literal.empty()) return route.literal == path;
  return std::regex_match(path, match, route.pattern);
}

}  // namespace

Router::Found Router::Find(Request& request) const {
  Found found;
  std::smatch match;
  for (const Route& route : routes_) {
    if (route.method != request.method || !Matches(route, request.path, match)) continue;
    if (route.literal.empty()) {
      request.matches.assign(match.begin(), match.end());
    } else {
      request.matches = {request.path};
    }
    found.route = &route;
    return found;
  }
  // No route for this method: does another method take the path (405)?
  for (const Route& route : routes_) {
    if (Matches(route, request.path, match)) found.path_known = true;
  }
  return found;
}

void Router::RenderError(const Request& request, Response& response, int status,
                         const std::string& message) const {
  response = Response{};
  response.status = status;
  if (render_error_) {
    render_error_(request, response, message);
  } else {
    response.SetContent(message + "\n", "text/plain");
  }
}

}  // namespace berth::http
