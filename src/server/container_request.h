// The `container` object of a job submission (job_request.h): the image a
// job's tasks run in and the host paths they see.
//
//   image        string, required, non-empty, no control characters
//   mounts       array of at most kMaxContainerMounts objects
//                {source, target, read_only}: absolute paths without "."
//                or ".." parts, nor ',' (the runtime's --mount syntax);
//                `source` within the operator's allow-list
//   workdir      string, an absolute path in the container
//   env          object of string -> string, names as the job's env
//   entrypoint   array of strings (argv), the first non-empty
//   mount_home   boolean: the user's home at the same path (the server
//                resolves it and checks it against the allow-list)
//   pull         "missing", "never" or "always"; absent: the node's default
//
// Unknown keys are errors, as in the rest of the request. Messages name the
// field as `container.mounts[1].source: ...`.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "server/strict_json.h"
#include "store/records.h"

namespace berth::server {

inline constexpr size_t kMaxContainerMounts = 64;

// Host paths a job may mount into its container: each allowed path and
// everything below it. Empty: none (a job may use an image, but no host
// path).
struct MountAllowList {
  std::vector<std::string> paths;
};

// Reads and checks the `container` value. `max_string` bounds every string.
Result<store::ContainerRequest> ReadContainerRequest(const strict_json::Json& value,
                                                     size_t max_string,
                                                     const MountAllowList& allow);

// OK when `path` (absolute, normalised: no "." or ".." parts) is one of
// the allowed paths or below one; else InvalidArgument naming `field`, the
// path and the allow-list.
Status CheckMountAllowed(std::string_view path, std::string_view field,
                         const MountAllowList& allow);

// The user's home, mounted at the same path when the request asks for it
// (mount_home), and checked against the allow-list. `home` is the user's
// home as the server's NSS knows it (empty: it does not). A request
// without mount_home is returned as it is.
Result<store::ContainerRequest> WithHomeMount(store::ContainerRequest request,
                                              const std::string& user, const std::string& home,
                                              const MountAllowList& allow);

}  // namespace berth::server
