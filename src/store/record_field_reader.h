// Reading the store's JSON records (record_json.cc): the fields of one
// object, each checked for its type and range, the first error kept for
// the whole record.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace berth::store {

// Reads the fields of one JSON object; the first type or range error is kept
// in a Status shared with the readers of nested objects, and every later
// read returns its fallback, so parsers read straight through and check once.
class FieldReader {
 public:
  using json = nlohmann::json;

  // `path` prefixes field names in errors ("request.", "placement[2].").
  FieldReader(const json& object, std::string path, Status& error)
      : object_(object), path_(std::move(path)), error_(error) {
    if (!object_.is_object()) {
      Fail(path_.empty() ? "(record)" : path_.substr(0, path_.size() - 1), "an object", object_);
    }
  }

  bool failed() const { return !error_.ok(); }
  std::string Path(std::string_view key) const { return path_ + std::string(key); }

  // The field, or null when absent, null, or the object itself is broken.
  const json* Find(std::string_view key) const {
    if (failed() || !object_.is_object()) return nullptr;
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return nullptr;
    return &*it;
  }

  std::optional<int64_t> OptionalInt64(std::string_view key) {
    return Integer(key, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                   "an int64");
  }
  int64_t Int64(std::string_view key, int64_t fallback) {
    return OptionalInt64(key).value_or(fallback);
  }

  std::optional<int32_t> OptionalInt32(std::string_view key) {
    std::optional<int64_t> value = Integer(key, std::numeric_limits<int32_t>::min(),
                                           std::numeric_limits<int32_t>::max(), "an int32");
    if (!value) return std::nullopt;
    return static_cast<int32_t>(*value);
  }
  int32_t Int32(std::string_view key, int32_t fallback) {
    return OptionalInt32(key).value_or(fallback);
  }

  bool Bool(std::string_view key, bool fallback) {
    const json* value = Find(key);
    if (value == nullptr) return fallback;
    if (value->is_boolean()) return value->get<bool>();
    Fail(Path(key), "a boolean", *value);
    return fallback;
  }

  std::string String(std::string_view key) {
    const json* value = Find(key);
    if (value == nullptr) return {};
    if (value->is_string()) return value->get<std::string>();
    Fail(Path(key), "a string", *value);
    return {};
  }

  std::vector<std::string> Strings(std::string_view key) {
    std::vector<std::string> out;
    const json* array = Array(key);
    if (array == nullptr) return out;
    for (size_t i = 0; i < array->size(); ++i) {
      const json& item = (*array)[i];
      if (!item.is_string()) {
        Fail(Path(key) + "[" + std::to_string(i) + "]", "a string", item);
        return {};
      }
      out.push_back(item.get<std::string>());
    }
    return out;
  }

  std::map<std::string, std::string> StringMap(std::string_view key) {
    std::map<std::string, std::string> out;
    const json* value = Find(key);
    if (value == nullptr) return out;
    if (!value->is_object()) {
      Fail(Path(key), "an object", *value);
      return out;
    }
    for (const auto& [name, item] : value->items()) {
      if (!item.is_string()) {
        Fail(Path(key) + "." + name, "a string", item);
        return {};
      }
      out.emplace(name, item.get<std::string>());
    }
    return out;
  }

  const json* Array(std::string_view key) {
    const json* value = Find(key);
    if (value == nullptr || value->is_array()) return value;
    Fail(Path(key), "an array", *value);
    return nullptr;
  }

  const json* Object(std::string_view key) {
    const json* value = Find(key);
    if (value == nullptr || value->is_object()) return value;
    Fail(Path(key), "an object", *value);
    return nullptr;
  }

  // A field that must be one of a closed set of words.
  template <typename Enum, typename Parse>
  std::optional<Enum> Word(std::string_view key, Parse parse, std::string_view what) {
    const json* value = Find(key);
    if (value == nullptr) return std::nullopt;
    if (value->is_string()) {
      if (std::optional<Enum> parsed = parse(value->get_ref<const std::string&>())) return parsed;
    }
    Fail(Path(key), what, *value);
    return std::nullopt;
  }

  void Fail(const std::string& field, std::string_view expected, const json& got) {
    if (failed()) return;
    std::string shown = got.dump();
    if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
    error_ = InvalidArgument(field + ": expected " + std::string(expected) + ", got " + shown);
  }

 private:
  // An integer field within [min, max]; JSON floats (even 2.0) are refused.
  std::optional<int64_t> Integer(std::string_view key, int64_t min, int64_t max,
                                 std::string_view what) {
    const json* value = Find(key);
    if (value == nullptr) return std::nullopt;
    if (value->is_number_unsigned()) {
      const uint64_t number = value->get<uint64_t>();
      if (number <= static_cast<uint64_t>(max)) return static_cast<int64_t>(number);
    } else if (value->is_number_integer()) {
      const int64_t number = value->get<int64_t>();
      if (number >= min && number <= max) return number;
    }
    Fail(Path(key), what, *value);
    return std::nullopt;
  }

  const json& object_;
  std::string path_;
  Status& error_;
};

template <typename T>
Result<T> Finish(T value, const Status& error) {
  if (!error.ok()) return error;
  return value;
}

}  // namespace berth::store
