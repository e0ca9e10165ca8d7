#include "common/hostlist.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace berth {
namespace {

// A name split into its prefix and the digits that end it ("" if none).
struct SplitName {
  std::string_view prefix;
  std::string_view digits;
};

SplitName Split(std::string_view name) {
  size_t start = name.size();
  while (start > 0 && name[start - 1] >= '0' && name[start - 1] <= '9') --start;
  // Numbers longer than 18 digits would overflow: such a name is kept whole.
  if (name.size() - start > 18) start = name.size();
  return SplitName{name.substr(0, start), name.substr(start)};
}

uint64_t ValueOf(std::string_view digits) {
  uint64_t value = 0;
  for (char c : digits) value = value * 10 + static_cast<uint64_t>(c - '0');
  return value;
}

// `value` in decimal, zero-padded to at least `width` digits.
std::string Padded(uint64_t value, size_t width) {
  std::string text = std::to_string(value);
  if (text.size() < width) text.insert(0, width - text.size(), '0');
  return text;
}

// A run of names prefix+first .. prefix+last, or one name without digits.
struct Range {
  std::string_view prefix;
  std::string_view first_digits;  // empty: a name without a number
  std::string_view last_digits;
  uint64_t last = 0;

  // Whether `name` continues the run: same prefix, the next number, written
  // with the run's width (so the range expands back to the same names).
  bool Extends(const SplitName& name) const {
    if (first_digits.empty() || name.digits.empty() || name.prefix != prefix) return false;
    return name.digits == Padded(last + 1, first_digits.size());
  }

  std::string Body() const {
    std::string body(first_digits);
    if (last_digits != first_digits) body += "-" + std::string(last_digits);
    return body;
  }
};

std::vector<Range> Ranges(const std::vector<std::string>& names) {
  std::vector<Range> ranges;
  for (const std::string& name : names) {
    const SplitName split = Split(name);
    if (!ranges.empty() && ranges.back().Extends(split)) {
      ranges.back().last = ValueOf(split.digits);
      ranges.back().last_digits = split.digits;
      continue;
    }
    ranges.push_back(Range{.prefix = split.prefix,
                           .first_digits = split.digits,
                           .last_digits = split.digits,
                           .last = ValueOf(split.digits)});
  }
  return ranges;
}

}  // namespace

std::string CompressHostlist(const std::vector<std::string>& names) {
  const std::vector<Range> ranges = Ranges(names);
  std::string out;
  size_t i = 0;
  while (i < ranges.size()) {
    // The ranges after i with the same prefix (and a number) share a bracket.
    size_t end = i + 1;
    if (!ranges[i].first_digits.empty()) {
      while (end < ranges.size() && !ranges[end].first_digits.empty() &&
             ranges[end].prefix == ranges[i].prefix) {
        ++end;
      }
    }
    if (!out.empty()) out += ",";
    out += ranges[i].prefix;
    const bool bracket = end - i > 1 || ranges[i].first_digits != ranges[i].last_digits;
    if (bracket) out += "[";
    for (size_t k = i; k < end; ++k) {
      if (k > i) out += ",";
      out += ranges[k].Body();
    }
    if (bracket) out += "]";
    i = end;
  }
  return out;
}

std::string TasksPerNodeString(const std::vector<int>& tasks_per_node) {
  std::string out;
  size_t i = 0;
  while (i < tasks_per_node.size()) {
    size_t end = i + 1;
    while (end < tasks_per_node.size() && tasks_per_node[end] == tasks_per_node[i]) ++end;
    if (!out.empty()) out += ",";
    out += std::to_string(tasks_per_node[i]);
    if (end - i > 1) out += "(x" + std::to_string(end - i) + ")";
    i = end;
  }
  return out;
}

}  // namespace berth
