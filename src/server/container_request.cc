#include "server/container_request.h"

#include <algorithm>
#include <array>

#include "server/spec_text.h"

namespace berth::server {
namespace {

using strict_json::Json;
using namespace spec_text;    // NOLINT: the parsers' shared vocabulary
using namespace strict_json;  // NOLINT: typed reads of the body's fields

constexpr std::array<std::string_view, 7> kKnownKeys = {
    "entrypoint", "env", "image", "mount_home", "mounts", "pull", "workdir",
};
constexpr std::array<std::string_view, 3> kMountKeys = {"read_only", "source", "target"};
constexpr std::array<std::string_view, 3> kPullWords = {"always", "missing", "never"};
constexpr size_t kMaxEntrypointArgs = 1024;
constexpr size_t kMaxEnv = 256;

template <size_t N>
Status CheckKeys(const Json& object, const std::string& path,
                 const std::array<std::string_view, N>& known) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) != known.end()) continue;
    std::string names;
    for (std::string_view name : known) names += (names.empty() ? "" : ", ") + std::string(name);
    return InvalidArgument(path + ": unknown field " + Quote(it.key()) + " (known: " + names + ")");
  }
  return Status::Ok();
}

// A field's value, or nullptr when it is absent or null.
const Json* Find(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

// Absolute, without "." or ".." parts, and without ',' (which would end the
// value inside the runtime's `--mount type=bind,source=...` argument).
Status CheckPath(const std::string& path, const std::string& field) {
  if (!path.starts_with('/')) return RangeError(field, "an absolute path", Quote(path));
  if (path.find(',') != std::string::npos) {
    return RangeError(field, "a path without ','", Quote(path));
  }
  size_t start = 1;
  while (start <= path.size()) {
    const size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part(path.data() + start, end - start);
    if (part == "." || part == "..") {
      return RangeError(field, "a path without '.' or '..' parts", Quote(path));
    }
    start = end + 1;
  }
  return Status::Ok();
}

// "/data//x/" -> "/data/x": how paths are compared with the allow-list.
std::string Normalise(std::string_view path) {
  std::string out;
  for (char c : path) {
    if (c == '/' && !out.empty() && out.back() == '/') continue;
    out += c;
  }
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

bool IsEnvName(std::string_view name) {
  auto letter = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  return !name.empty() && letter(name.front()) &&
         std::all_of(name.begin(), name.end(),
                     [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

Result<store::ContainerMount> ReadMount(const Json& value, const std::string& field,
                                        size_t max_string, const MountAllowList& allow) {
  if (!value.is_object()) return TypeError(field, "an object {source, target, read_only}", value);
  BERTH_RETURN_IF_ERROR(CheckKeys(value, field, kMountKeys));
  store::ContainerMount mount;
  for (const auto& [key, target] :
       {std::pair{"source", &mount.source}, std::pair{"target", &mount.target}}) {
    const std::string name = field + "." + key;
    const Json* path = Find(value, key);
    if (path == nullptr) return InvalidArgument(name + ": required (an absolute path)");
    BERTH_ASSIGN_OR_RETURN(*target, ReadLabel(*path, name, max_string));
    BERTH_RETURN_IF_ERROR(CheckPath(*target, name));
  }
  if (const Json* read_only = Find(value, "read_only")) {
    BERTH_ASSIGN_OR_RETURN(mount.read_only, ReadBool(*read_only, field + ".read_only"));
  }
  BERTH_RETURN_IF_ERROR(CheckMountAllowed(mount.source, field + ".source", allow));
  return mount;
}

Status ReadEnv(const Json& value, size_t max_string, std::map<std::string, std::string>& out) {
  if (!value.is_object()) return TypeError("container.env", "an object of strings", value);
  if (value.size() > kMaxEnv) {
    return InvalidArgument("container.env: " + std::to_string(value.size()) + " entries, limit " +
                           std::to_string(kMaxEnv));
  }
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string& name = it.key();
    if (!IsEnvName(name) || name.size() > 256) {
      return InvalidArgument("container.env: invalid name " + Quote(name) +
                             " (must match [A-Za-z_][A-Za-z0-9_]*)");
    }
    const std::string field = "container.env." + name;
    if (name.starts_with("BERTH_") || name == "CUDA_VISIBLE_DEVICES") {
      return InvalidArgument(field + ": reserved (the agent sets it)");
    }
    BERTH_ASSIGN_OR_RETURN(std::string text, ReadString(it.value(), field, max_string));
    out.emplace(name, std::move(text));
  }
  return Status::Ok();
}

Status ReadEntrypoint(const Json& value, size_t max_string, std::vector<std::string>& out) {
  if (!value.is_array()) return TypeError("container.entrypoint", "an array of strings", value);
  if (value.size() > kMaxEntrypointArgs) {
    return RangeError("container.entrypoint", "at most 1024 arguments",
                      std::to_string(value.size()));
  }
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string field = "container.entrypoint[" + std::to_string(i) + "]";
    BERTH_ASSIGN_OR_RETURN(std::string arg, ReadString(value[i], field, max_string));
    out.push_back(std::move(arg));
  }
  if (!out.empty() && out.front().empty()) {
    return InvalidArgument("container.entrypoint[0]: the program must not be empty");
  }
  return Status::Ok();
}

}  // namespace

Status CheckMountAllowed(std::string_view path, std::string_view field,
                         const MountAllowList& allow) {
  const std::string wanted = Normalise(path);
  for (const std::string& allowed_path : allow.paths) {
    const std::string allowed = Normalise(allowed_path);
    if (wanted == allowed || allowed == "/" ||
        (wanted.starts_with(allowed) && wanted[allowed.size()] == '/')) {
      return Status::Ok();
    }
  }
  std::string list;
  for (const std::string& allowed : allow.paths) list += (list.empty() ? "" : ", ") + allowed;
  return InvalidArgument(std::string(field) + ": " + Quote(path) +
                         " is outside the host paths containers may mount (" +
                         (list.empty() ? "none are allowed" : list) +
                         "; the server's container_mount_allow)");
}

Result<store::ContainerRequest> ReadContainerRequest(const Json& value, size_t max_string,
                                                     const MountAllowList& allow) {
  if (!value.is_object()) return TypeError("container", "an object with an image", value);
  BERTH_RETURN_IF_ERROR(CheckKeys(value, "container", kKnownKeys));
  store::ContainerRequest request;
  const Json* image = Find(value, "image");
  if (image == nullptr) return InvalidArgument("container.image: required (an image name)");
  BERTH_ASSIGN_OR_RETURN(request.image, ReadLabel(*image, "container.image", max_string));
  if (request.image.empty() || request.image.find(' ') != std::string::npos) {
    return RangeError("container.image", "an image name without spaces", Quote(request.image));
  }
  if (const Json* mounts = Find(value, "mounts")) {
    if (!mounts->is_array()) return TypeError("container.mounts", "an array", *mounts);
    if (mounts->size() > kMaxContainerMounts) {
      return RangeError("container.mounts", "at most 64 mounts", std::to_string(mounts->size()));
    }
    for (size_t i = 0; i < mounts->size(); ++i) {
      BERTH_ASSIGN_OR_RETURN(store::ContainerMount mount,
                             ReadMount((*mounts)[i], "container.mounts[" + std::to_string(i) + "]",
                                       max_string, allow));
      request.mounts.push_back(std::move(mount));
    }
  }
  if (const Json* workdir = Find(value, "workdir")) {
    BERTH_ASSIGN_OR_RETURN(request.workdir, ReadLabel(*workdir, "container.workdir", max_string));
    BERTH_RETURN_IF_ERROR(CheckPath(request.workdir, "container.workdir"));
  }
  if (const Json* env = Find(value, "env")) {
    BERTH_RETURN_IF_ERROR(ReadEnv(*env, max_string, request.env));
  }
  if (const Json* entrypoint = Find(value, "entrypoint")) {
    BERTH_RETURN_IF_ERROR(ReadEntrypoint(*entrypoint, max_string, request.entrypoint));
  }
  if (const Json* home = Find(value, "mount_home")) {
    BERTH_ASSIGN_OR_RETURN(request.mount_home, ReadBool(*home, "container.mount_home"));
  }
  if (const Json* pull = Find(value, "pull")) {
    BERTH_ASSIGN_OR_RETURN(request.pull, ReadLabel(*pull, "container.pull", 16));
    if (std::find(kPullWords.begin(), kPullWords.end(), request.pull) == kPullWords.end()) {
      return RangeError("container.pull", "missing, never or always", Quote(request.pull));
    }
  }
  return request;
}

Result<store::ContainerRequest> WithHomeMount(store::ContainerRequest request,
                                              const std::string& user, const std::string& home,
                                              const MountAllowList& allow) {
  if (!request.mount_home) return request;
  if (home.empty() || !home.starts_with('/')) {
    return InvalidArgument("container.mount_home: user " + Quote(user) +
                           " has no home directory the server knows");
  }
  BERTH_RETURN_IF_ERROR(CheckPath(home, "container.mount_home"));
  BERTH_RETURN_IF_ERROR(CheckMountAllowed(home, "container.mount_home", allow));
  const bool mounted =
      std::any_of(request.mounts.begin(), request.mounts.end(),
                  [&](const store::ContainerMount& m) { return m.target == home; });
  if (!mounted) request.mounts.push_back({home, home, false});
  return request;
}

}  // namespace berth::server
