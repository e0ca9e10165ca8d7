#include "server/dashboard.h"

#include <cctype>
#include <string>
#include <vector>

#include "server/dashboard_files.h"

namespace berth::server {
namespace {

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

const std::vector<StaticAsset>& Assets() {
  static const std::vector<StaticAsset> assets = [] {
    std::vector<StaticAsset> out;
    for (const EmbeddedFile& file : EmbeddedDashboardFiles()) {
      out.push_back(StaticAsset{file.name, ContentTypeFor(file.name), file.body});
    }
    return out;
  }();
  return assets;
}

// The page loads only its own files and talks only to its own server: a
// script injected through job names or logs (the page renders them as text,
// never as HTML) would still find nowhere to load from or send to.
constexpr char kContentSecurityPolicy[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

}  // namespace

std::string_view ContentTypeFor(std::string_view name) {
  if (EndsWith(name, ".html")) return "text/html; charset=utf-8";
  if (EndsWith(name, ".js")) return "text/javascript; charset=utf-8";
  if (EndsWith(name, ".css")) return "text/css; charset=utf-8";
  if (EndsWith(name, ".svg")) return "image/svg+xml";
  if (EndsWith(name, ".png")) return "image/png";
  if (EndsWith(name, ".ico")) return "image/x-icon";
  return "application/octet-stream";
}

const StaticAsset* FindDashboardAsset(std::string_view path) {
  std::string_view name;
  if (path == "/" || path == "/ui" || path == "/ui/") {
    name = "index.html";
  } else if (path.starts_with("/ui/")) {
    name = path.substr(4);
  } else {
    return nullptr;
  }
  // Names are matched exactly against the embedded list: nothing here ever
  // reads a file, so ".." or a slash can only fail to match.
  for (const StaticAsset& asset : Assets()) {
    if (asset.name == name) return &asset;
  }
  return nullptr;
}

void InstallDashboard(http::Router& router) {
  auto serve = [](const http::Request& request, http::Response& response) {
    const StaticAsset* asset = FindDashboardAsset(request.path);
    response.status = 200;
    // Revalidate every time: a new binary serves new files at once.
    response.SetHeader("Cache-Control", "no-cache");
    response.SetHeader("Content-Security-Policy", kContentSecurityPolicy);
    response.SetHeader("X-Content-Type-Options", "nosniff");
    response.SetHeader("Referrer-Policy", "no-referrer");
    response.SetContent(std::string(asset->body), std::string(asset->content_type));
  };
  // One route per embedded file: any other path under /ui/ is the router's
  // 404, and nothing here ever reads a file.
  for (const std::string path : {"/", "/ui", "/ui/"}) router.Get(path, serve);
  for (const StaticAsset& asset : Assets()) {
    std::string pattern = "/ui/";
    for (char c : asset.name) {
      if (std::isalnum(static_cast<unsigned char>(c)) == 0) pattern += '\\';
      pattern += c;
    }
    router.Get(pattern, serve);
  }
}

}  // namespace berth::server
