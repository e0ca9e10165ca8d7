#include "cli/yaml_fields.h"

#include <charconv>
#include <utility>

namespace berth::cli {
namespace {

bool Present(const YAML::Node& node) { return node.IsDefined() && !node.IsNull(); }

Status Expected(std::string_view path, std::string_view what) {
  return InvalidArgument(std::string(path) + ": expected " + std::string(what));
}

// kubectl's own output is full of these ("creationTimestamp: null",
// "resources: {}", "status: {}"): they say nothing, so nothing is ignored.
bool CarriesNothing(const YAML::Node& value) {
  return value.IsNull() || ((value.IsMap() || value.IsSequence()) && value.size() == 0);
}

}  // namespace

Result<std::string> YamlScalar(const YAML::Node& node, std::string_view path) {
  if (!node.IsScalar()) return Expected(path, "a single value, not a list or a mapping");
  return node.Scalar();
}

std::string YamlElementPath(std::string_view path, size_t index) {
  return std::string(path) + "[" + std::to_string(index) + "]";
}

Result<YamlFields> YamlFields::Open(const YAML::Node& node, std::string path) {
  if (Present(node) && !node.IsMap()) {
    return Expected(path.empty() ? "manifest" : path, "a mapping of fields");
  }
  return YamlFields(Present(node) ? node : YAML::Node(YAML::NodeType::Map), std::move(path));
}

std::string YamlFields::PathOf(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

YAML::Node YamlFields::Take(std::string_view key) {
  taken_.insert(std::string(key));
  const YAML::Node& map = node_;
  YAML::Node value = map[std::string(key)];
  return Present(value) ? value : YAML::Node(YAML::NodeType::Null);
}

Result<std::optional<std::string>> YamlFields::String(std::string_view key) {
  const YAML::Node value = Take(key);
  if (value.IsNull()) return std::optional<std::string>();
  BERTH_ASSIGN_OR_RETURN(std::string text, YamlScalar(value, PathOf(key)));
  return std::optional<std::string>(std::move(text));
}

Result<std::optional<int64_t>> YamlFields::Integer(std::string_view key, int64_t min) {
  BERTH_ASSIGN_OR_RETURN(std::optional<std::string> text, String(key));
  if (!text) return std::optional<int64_t>();
  int64_t value = 0;
  const char* end = text->data() + text->size();
  const auto [stop, error] = std::from_chars(text->data(), end, value);
  if (text->empty() || error != std::errc() || stop != end || value < min) {
    return InvalidArgument(PathOf(key) + ": expected an integer >= " + std::to_string(min) +
                           ", got '" + *text + "'");
  }
  return std::optional<int64_t>(value);
}

Result<std::optional<bool>> YamlFields::Bool(std::string_view key) {
  BERTH_ASSIGN_OR_RETURN(std::optional<std::string> text, String(key));
  if (!text) return std::optional<bool>();
  if (*text == "true" || *text == "True" || *text == "TRUE") return std::optional<bool>(true);
  if (*text == "false" || *text == "False" || *text == "FALSE") return std::optional<bool>(false);
  return InvalidArgument(PathOf(key) + ": expected true or false, got '" + *text + "'");
}

Result<std::vector<std::string>> YamlFields::Strings(std::string_view key) {
  const YAML::Node value = Take(key);
  std::vector<std::string> strings;
  if (value.IsNull()) return strings;
  if (!value.IsSequence()) return Expected(PathOf(key), "a list of strings");
  for (size_t i = 0; i < value.size(); ++i) {
    BERTH_ASSIGN_OR_RETURN(std::string text, YamlScalar(value[i], YamlElementPath(PathOf(key), i)));
    strings.push_back(std::move(text));
  }
  return strings;
}

std::vector<std::string> YamlFields::Untaken() const {
  std::vector<std::string> untaken;
  for (const auto& entry : node_) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "?";
    if (!taken_.contains(key)) untaken.push_back(key);
  }
  return untaken;
}

std::vector<std::string> YamlFields::Rest() const {
  std::vector<std::string> rest;
  for (std::string& key : Untaken()) {
    if (!CarriesNothing(node_[key])) rest.push_back(std::move(key));
  }
  return rest;
}

}  // namespace berth::cli
