// A strict reader of one JSON object, for the wire formats (the user API's
// bodies, the agent protocol): it remembers which fields were read, and
// Finish() rejects the rest. Every error is InvalidArgument naming the field
// by its path ("run[0].limits.cpu_milli: expected an integer").
//
// A field that is absent or null reads as absent (the fallback, or an
// error for a required one). Header-only, like the rest of common/; whoever
// includes it links nlohmann_json.
//
// Not thread-safe; one reader per object, used once.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/printable.h"
#include "common/status.h"

namespace berth {

class JsonFields {
 public:
  // `prefix`: the object's own path ("" for a whole body, "run[0]").
  // REQUIRES: `body` outlives the reader.
  JsonFields(const nlohmann::json& body, std::string prefix)
      : body_(body), prefix_(std::move(prefix)) {}

  Status CheckObject() const {
    if (!body_.is_object()) return InvalidArgument(Name("") + "expected a JSON object");
    return Status::Ok();
  }
  // The field's value, or null when it is absent or JSON null.
  const nlohmann::json* Get(const std::string& key) {
    known_.insert(key);
    auto it = body_.find(key);
    return it == body_.end() || it->is_null() ? nullptr : &*it;
  }
  Result<std::string> String(const std::string& key, bool required) {
    const nlohmann::json* value = Get(key);
    if (value == nullptr) {
      if (required) return InvalidArgument(Name(key) + "is required");
      return std::string();
    }
    if (!value->is_string()) return InvalidArgument(Name(key) + "expected a string");
    return value->get<std::string>();
  }
  Result<int64_t> Int(const std::string& key, int64_t fallback, int64_t lo, int64_t hi) {
    const nlohmann::json* value = Get(key);
    if (value == nullptr) return fallback;
    return CheckInt(*value, Path(key), lo, hi);
  }
  // A number, integer or not, in lo..hi; nullopt when absent.
  Result<std::optional<double>> Number(const std::string& key, double lo, double hi) {
    const nlohmann::json* value = Get(key);
    if (value == nullptr) return std::optional<double>();
    if (!value->is_number()) return InvalidArgument(Name(key) + "expected a number");
    const double number = value->get<double>();
    if (number < lo || number > hi) {
      return InvalidArgument(Name(key) + "must be " + Format(lo) + ".." + Format(hi) + ", got " +
                             value->dump());
    }
    return std::optional<double>(number);
  }
  Result<bool> Bool(const std::string& key, bool fallback) {
    const nlohmann::json* value = Get(key);
    if (value == nullptr) return fallback;
    if (!value->is_boolean()) return InvalidArgument(Name(key) + "expected true or false");
    return value->get<bool>();
  }
  // An array of strings; empty when absent. An element that is not a
  // string is named by its index ("command[2]").
  Result<std::vector<std::string>> Strings(const std::string& key) {
    std::vector<std::string> out;
    const nlohmann::json* list = Get(key);
    if (list == nullptr) return out;
    if (!list->is_array()) return InvalidArgument(Name(key) + "expected an array of strings");
    for (size_t i = 0; i < list->size(); ++i) {
      if (!(*list)[i].is_string()) {
        return InvalidArgument(Path(key) + "[" + std::to_string(i) + "]: expected a string");
      }
      out.push_back((*list)[i].get<std::string>());
    }
    return out;
  }
  // An array of integers in lo..hi; empty when absent.
  Result<std::vector<int64_t>> Ints(const std::string& key, int64_t lo, int64_t hi) {
    std::vector<int64_t> out;
    const nlohmann::json* list = Get(key);
    if (list == nullptr) return out;
    if (!list->is_array()) return InvalidArgument(Name(key) + "expected an array of integers");
    for (size_t i = 0; i < list->size(); ++i) {
      BERTH_ASSIGN_OR_RETURN(
          int64_t number, CheckInt((*list)[i], Path(key) + "[" + std::to_string(i) + "]", lo, hi));
      out.push_back(number);
    }
    return out;
  }
  // An object of strings ({"LR": "0.1"}); empty when absent. A value that
  // is not a string is named by its key ("env.LR").
  Result<std::map<std::string, std::string>> StringMap(const std::string& key) {
    std::map<std::string, std::string> out;
    const nlohmann::json* object = Get(key);
    if (object == nullptr) return out;
    if (!object->is_object()) return InvalidArgument(Name(key) + "expected an object of strings");
    for (const auto& [name, value] : object->items()) {
      if (!value.is_string())
        return InvalidArgument(Path(key) + "." + Printable(name, kMaxKeyChars) +
                               ": expected a string");
      out[name] = value.get<std::string>();
    }
    return out;
  }
  // An array whose elements `parse(element, path)` reads, each a Result<T>
  // ("tasks[3]" is its path); empty when absent.
  template <typename T, typename Parse>
  Result<std::vector<T>> List(const std::string& key, Parse parse) {
    std::vector<T> out;
    const nlohmann::json* list = Get(key);
    if (list == nullptr) return out;
    if (!list->is_array()) return InvalidArgument(Name(key) + "expected an array");
    for (size_t i = 0; i < list->size(); ++i) {
      BERTH_ASSIGN_OR_RETURN(T item, parse((*list)[i], Path(key) + "[" + std::to_string(i) + "]"));
      out.push_back(std::move(item));
    }
    return out;
  }
  Status Finish() const {
    for (const auto& [key, value] : body_.items()) {
      if (!known_.contains(key)) {
        return InvalidArgument(Name(Printable(key, kMaxKeyChars)) + "unknown field");
      }
    }
    return Status::Ok();
  }
  // "prefix.key", the path a nested reader takes as its prefix.
  std::string Path(const std::string& key) const {
    if (key.empty()) return prefix_;
    return prefix_.empty() ? key : prefix_ + "." + key;
  }
  // "prefix.key: ", how an error message starts ("" for a whole body).
  std::string Name(const std::string& key) const {
    const std::string path = Path(key);
    return path.empty() ? "" : path + ": ";
  }

 private:
  // Keys come from the sender: messages quote them escaped and cut.
  static constexpr size_t kMaxKeyChars = 64;

  // 30 rather than 30.0, for bounds in messages.
  static std::string Format(double number) {
    if (number > -1e15 && number < 1e15 &&
        number == static_cast<double>(static_cast<int64_t>(number))) {
      return std::to_string(static_cast<int64_t>(number));
    }
    return nlohmann::json(number).dump();
  }
  static Result<int64_t> CheckInt(const nlohmann::json& value, const std::string& path, int64_t lo,
                                  int64_t hi) {
    if (!value.is_number_integer()) return InvalidArgument(path + ": expected an integer");
    // An integer above INT64_MAX is unsigned in nlohmann's model.
    if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return InvalidArgument(path + ": must be " + std::to_string(lo) + ".." + std::to_string(hi) +
                             ", got " + value.dump());
    }
    const int64_t number = value.get<int64_t>();
    if (number < lo || number > hi) {
      return InvalidArgument(path + ": must be " + std::to_string(lo) + ".." + std::to_string(hi) +
                             ", got " + std::to_string(number));
    }
    return number;
  }

  const nlohmann::json& body_;
  std::string prefix_;
  std::set<std::string> known_;
};

}  // namespace berth
