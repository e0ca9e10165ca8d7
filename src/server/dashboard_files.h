// The dashboard's static files as built into the binary: defined by the
// source that src/server/dashboard/embed_assets.cmake generates at build
// time from src/server/dashboard/. Served by dashboard.cc.
#pragma once

#include <span>
#include <string_view>

namespace berth::server {

struct EmbeddedFile {
  std::string_view name;  // file name in src/server/dashboard/, e.g. "app.js"
  std::string_view body;
};

std::span<const EmbeddedFile> EmbeddedDashboardFiles();

}  // namespace berth::server
