// Typed reads of the server's TOML configuration (config.cc and
// queue_config.cc): every error names the key by its path, and unknown keys
// are errors, so a typo never silently leaves a default in place.
#pragma once

#include <toml++/toml.h>

#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "common/status.h"
#include "core/time.h"

namespace berth::server::toml_read {

// InvalidArgument naming the first key of `table` not in `known`.
inline Status Unknown(const toml::table& table, const std::string& path,
                      const std::set<std::string>& known) {
  for (const auto& [key, value] : table) {
    if (!known.contains(std::string(key.str()))) {
      std::string list;
      for (const std::string& name : known) list += (list.empty() ? "" : ", ") + name;
      return InvalidArgument(path + std::string(key.str()) + ": unknown key (known: " + list + ")");
    }
  }
  return Status::Ok();
}

template <typename T>
Result<T> Get(const toml::table& table, const std::string& path, const std::string& key,
              T fallback) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return fallback;
  // toml++ reads an integer as a boolean; a setting that is one takes only true or false.
  if constexpr (std::is_same_v<T, bool>) {
    if (!node->is_boolean()) return InvalidArgument(path + key + ": wrong type");
  }
  std::optional<T> value = node->value<T>();
  if (!value) return InvalidArgument(path + key + ": wrong type");
  return *value;
}

// An integer key that may be absent, within [min, max].
inline Result<std::optional<int64_t>> OptionalInteger(const toml::table& table,
                                                      const std::string& path,
                                                      const std::string& key, int64_t min,
                                                      int64_t max) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return std::optional<int64_t>();
  if (!node->is_integer()) return InvalidArgument(path + key + ": expected an integer");
  const int64_t value = node->as_integer()->get();
  if (value < min || value > max) {
    return InvalidArgument(path + key + ": must be " + std::to_string(min) + ".." +
                           std::to_string(max) + ", got " + std::to_string(value));
  }
  return std::optional<int64_t>(value);
}

// An array of strings; absent: empty.
inline Result<std::vector<std::string>> Strings(const toml::table& table, const std::string& path,
                                                const std::string& key) {
  std::vector<std::string> out;
  const toml::node* node = table.get(key);
  if (node == nullptr) return out;
  const toml::array* array = node->as_array();
  if (array == nullptr) return InvalidArgument(path + key + ": expected an array of strings");
  for (size_t i = 0; i < array->size(); ++i) {
    std::optional<std::string> item = (*array)[i].value<std::string>();
    if (!item || !(*array)[i].is_string()) {
      return InvalidArgument(path + key + "[" + std::to_string(i) + "]: expected a string");
    }
    out.push_back(std::move(*item));
  }
  return out;
}

// A positive number of seconds times `scale` (3600 for a key in hours).
inline Result<core::Duration> Seconds(const toml::table& table, const std::string& path,
                                      const std::string& key, double scale,
                                      core::Duration fallback) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return fallback;
  std::optional<double> value = node->value<double>();
  if (!value || *value <= 0) return InvalidArgument(path + key + ": expected a positive number");
  return core::Duration::Micros(static_cast<int64_t>(*value * scale * 1e6));
}

}  // namespace berth::server::toml_read
