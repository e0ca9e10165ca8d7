#include "protocol/output_pattern.h"

#include "common/printable.h"

namespace berth::protocol {
namespace {

constexpr std::string_view kEscapes = "jxuAaNt%";
// What Slurm prints for %a outside an array (NO_VAL - 1).
constexpr std::string_view kNoArrayIndex = "4294967294";

}  // namespace

Status CheckOutputPattern(std::string_view pattern, std::string_view field) {
  const std::string name(field);
  if (pattern.find('\0') != std::string_view::npos) {
    return InvalidArgument(name + ": a file name cannot hold a NUL byte");
  }
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') continue;
    if (i + 1 == pattern.size()) {
      return InvalidArgument(name + ": '%' at the end; write %% for a percent sign");
    }
    if (kEscapes.find(pattern[i + 1]) == std::string_view::npos) {
      return InvalidArgument(name + ": unknown pattern %" + Printable(pattern.substr(i + 1, 1), 8) +
                             " (known: %j %x %u %A %a %N %t %%)");
    }
    ++i;
  }
  return Status::Ok();
}

std::string ExpandOutputPattern(std::string_view pattern, const OutputNames& names) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    switch (pattern[++i]) {
      case 'j':
        out += std::to_string(names.job);
        break;
      case 'x':
        out += names.name;
        break;
      case 'u':
        out += names.user;
        break;
      case 'A':
        out += std::to_string(names.array_job.value_or(names.job));
        break;
      case 'a':
        out += names.array_index ? std::to_string(*names.array_index) : std::string(kNoArrayIndex);
        break;
      case 'N':
        out += names.node;
        break;
      case 't':
        out += std::to_string(names.task);
        break;
      default:  // %% (and, unchecked, any other: kept as written)
        if (pattern[i] != '%') out += '%';
        out += pattern[i];
    }
  }
  return out;
}

}  // namespace berth::protocol
