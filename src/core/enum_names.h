// Lookups over a fixed table of (enum value, stable API name) pairs, shared
// by the enums whose names are part of the API (job states, reasons).
#pragma once

#include <optional>
#include <string_view>
#include <utility>

namespace berth::core {

template <typename Enum, typename Table>
std::string_view NameIn(const Table& table, Enum value) {
  for (const auto& [entry, name] : table) {
    if (entry == value) return name;
  }
  return "unknown";
}

template <typename Enum, typename Table>
std::optional<Enum> ValueIn(const Table& table, std::string_view name) {
  for (const auto& [entry, text] : table) {
    if (text == name) return entry;
  }
  return std::nullopt;
}

}  // namespace berth::core
