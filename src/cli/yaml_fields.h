// The fields of one YAML mapping, read by name with their path for messages
// ("spec.containers[0].image"), each marked as used when read, so that the
// caller can warn about the ones nothing read (Rest). Values are read from
// their text: numbers exactly, booleans as YAML 1.2 writes them.
//
// A field whose value is null ("key:" or "key: null") counts as absent, as
// in Kubernetes. Errors are InvalidArgument starting with the field's path.
// Not thread-safe; cheap to copy (yaml-cpp nodes share their data).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace berth::cli {

class YamlFields {
 public:
  // `node` must be a mapping (or null: no fields), else an error naming `path`.
  static Result<YamlFields> Open(const YAML::Node& node, std::string path);

  // The path of a field of this mapping: "spec" + "nodeSelector".
  std::string PathOf(std::string_view key) const;
  const std::string& path() const { return path_; }

  // The field's node, marked as used; a null node when absent or null.
  YAML::Node Take(std::string_view key);

  Result<std::optional<std::string>> String(std::string_view key);
  Result<std::optional<int64_t>> Integer(std::string_view key, int64_t min);
  Result<std::optional<bool>> Bool(std::string_view key);
  // A sequence of strings ("command: [python, train.py]").
  Result<std::vector<std::string>> Strings(std::string_view key);

  // The keys nothing took, in the document's order.
  std::vector<std::string> Untaken() const;
  // Those worth a warning: Untaken less the keys whose value is null or an
  // empty mapping or list.
  std::vector<std::string> Rest() const;

 private:
  YamlFields(YAML::Node node, std::string path) : node_(std::move(node)), path_(std::move(path)) {}

  YAML::Node node_;
  std::string path_;
  std::set<std::string, std::less<>> taken_;
};

// A scalar's text, or an error naming `path` when it is a list or a mapping.
Result<std::string> YamlScalar(const YAML::Node& node, std::string_view path);

// The elements' paths of a sequence at `path`: "path[0]", "path[1]", ...
std::string YamlElementPath(std::string_view path, size_t index);

}  // namespace berth::cli
