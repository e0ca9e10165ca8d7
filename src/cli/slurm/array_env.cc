#include "cli/slurm/array_env.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <set>

namespace berth::cli::slurm {
namespace {

std::optional<int64_t> Number(std::string_view text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 0) {
    return std::nullopt;
  }
  return value;
}

// "5", "5-7" or "0-15:4" into `indices`; false if it is not one of those.
bool AddRange(std::string_view range, std::set<int64_t>& indices) {
  int64_t step = 1;
  if (const size_t colon = range.find(':'); colon != std::string_view::npos) {
    const std::optional<int64_t> given = Number(range.substr(colon + 1));
    if (!given || *given < 1) return false;
    step = *given;
    range = range.substr(0, colon);
  }
  const size_t dash = range.find('-');
  const std::optional<int64_t> first = Number(range.substr(0, dash));
  const std::optional<int64_t> last =
      dash == std::string_view::npos ? first : Number(range.substr(dash + 1));
  // The server bounds arrays far below this; a spec beyond it is its to refuse.
  if (!first || !last || *last < *first || (*last - *first) / step > 1'000'000) return false;
  for (int64_t index = *first; index <= *last; index += step) indices.insert(index);
  return true;
}

}  // namespace

std::optional<std::map<std::string, std::string>> ArrayEnvironment(std::string_view spec) {
  spec = spec.substr(0, spec.find('%'));
  std::set<int64_t> indices;
  size_t start = 0;
  while (start <= spec.size()) {
    const size_t comma = std::min(spec.find(',', start), spec.size());
    if (!AddRange(spec.substr(start, comma - start), indices)) return std::nullopt;
    start = comma + 1;
  }
  if (indices.empty()) return std::nullopt;
  int64_t step = indices.size() > 1 ? *std::next(indices.begin()) - *indices.begin() : 1;
  for (auto it = std::next(indices.begin()); it != indices.end(); ++it) {
    if (*it - *std::prev(it) != step) step = 1;
  }
  return std::map<std::string, std::string>{
      {"SLURM_ARRAY_TASK_MIN", std::to_string(*indices.begin())},
      {"SLURM_ARRAY_TASK_MAX", std::to_string(*indices.rbegin())},
      {"SLURM_ARRAY_TASK_COUNT", std::to_string(indices.size())},
      {"SLURM_ARRAY_TASK_STEP", std::to_string(step)}};
}

}  // namespace berth::cli::slurm
