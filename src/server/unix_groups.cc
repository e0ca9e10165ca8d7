#include "server/unix_groups.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace berth::server {
namespace {

// A buffer size for the reentrant NSS calls: what the host suggests, or
// enough for most entries; grown on ERANGE.
size_t BufferSize(int name) {
  const long suggested = sysconf(name);
  return suggested > 0 ? static_cast<size_t>(suggested) : 16384;
}

}  // namespace

std::vector<std::string> UnixGroupsOf(const std::string& user) {
  std::vector<std::string> names;
  passwd entry{};
  passwd* found = nullptr;
  std::vector<char> buffer(BufferSize(_SC_GETPW_R_SIZE_MAX));
  while (getpwnam_r(user.c_str(), &entry, buffer.data(), buffer.size(), &found) == ERANGE) {
    buffer.resize(buffer.size() * 2);
  }
  if (found == nullptr) return names;
  const gid_t primary = entry.pw_gid;

  int count = 32;
  std::vector<gid_t> gids(static_cast<size_t>(count));
  while (getgrouplist(user.c_str(), primary, gids.data(), &count) == -1) {
    gids.resize(static_cast<size_t>(count) + 1);  // count now holds the number needed
    count = static_cast<int>(gids.size());
  }
  gids.resize(static_cast<size_t>(count));

  std::vector<char> group_buffer(BufferSize(_SC_GETGR_R_SIZE_MAX));
  for (gid_t gid : gids) {
    group* group_found = nullptr;
    ::group group_entry{};
    int error = 0;
    while ((error = getgrgid_r(gid, &group_entry, group_buffer.data(), group_buffer.size(),
                               &group_found)) == ERANGE) {
      group_buffer.resize(group_buffer.size() * 2);
    }
    if (error == 0 && group_found != nullptr) names.emplace_back(group_found->gr_name);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace berth::server
