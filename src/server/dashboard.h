// The web dashboard: plain HTML, CSS and JavaScript (src/server/dashboard/)
// built into the binary and served without a token, at `/` (index.html) and
// `/ui/<file>`. The page itself calls the JSON API with the bearer token the
// user gives it (`/#token=...`, then kept in the browser's localStorage);
// the static files hold no data. See docs/operations.md, "Dashboard".
#pragma once

#include <string_view>

#include "http/router.h"

namespace berth::server {

struct StaticAsset {
  std::string_view name;          // "index.html"
  std::string_view content_type;  // "text/html; charset=utf-8"
  std::string_view body;
};

// The asset a request path names: "/" is index.html, "/ui/app.js" is
// app.js. nullptr for anything else (other paths, unknown files, "..").
const StaticAsset* FindDashboardAsset(std::string_view path);

// The Content-Type for a file name, by its extension.
std::string_view ContentTypeFor(std::string_view name);

// Registers GET `/` and `/ui/<file>` on `server`.
void InstallDashboard(http::Router& router);

}  // namespace berth::server
