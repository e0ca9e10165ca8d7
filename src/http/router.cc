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

std::string Response::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (SameName(key, name)) return value;
  }
  return "";
}

void Router::Add(std::string method, const std::string& pattern, Handler handle, Admit admit,
                 Workers workers) {
  routes_.push_back(Route{std::move(method), std::regex(pattern, std::regex::ECMAScript),
                          std::move(handle), std::move(admit), workers});
}

Router::Found Router::Find(Request& request) const {
  Found found;
  std::smatch match;
  for (const Route& route : routes_) {
    if (!std::regex_match(request.path, match, route.pattern)) continue;
    if (route.method != request.method) {
      found.path_known = true;
      continue;
    }
    request.matches.assign(match.begin(), match.end());
    found.route = &route;
    return found;
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
