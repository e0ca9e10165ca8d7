#include "server/job_specs.h"

#include <algorithm>
#include <string>

#include "server/spec_text.h"

namespace berth::server {
namespace {

using namespace spec_text;  // NOLINT: the parsers' shared vocabulary

struct ArrayRange {
  int64_t first = 0;
  int64_t last = 0;
  int64_t step = 1;
};

Result<ArrayRange> ParseArrayItem(std::string_view item, int32_t max_array) {
  const std::string format =
      "expected INDEX, FIRST-LAST or FIRST-LAST:STEP (comma-separated, then an optional %N), "
      "got " +
      Quote(item);
  ArrayRange range;
  const size_t dash = item.find('-');
  const size_t colon = item.find(':');
  if (colon != std::string_view::npos && (dash == std::string_view::npos || colon < dash)) {
    return InvalidArgument(format);  // a step needs a range
  }
  const std::optional<int64_t> first = SaturatingNumber(item.substr(0, std::min(dash, colon)));
  if (!first) return InvalidArgument(format);
  range.first = range.last = *first;
  if (dash != std::string_view::npos) {
    const std::string_view rest = item.substr(dash + 1);
    const size_t step_at = rest.find(':');
    const std::optional<int64_t> last = SaturatingNumber(rest.substr(0, step_at));
    if (!last) return InvalidArgument(format);
    range.last = *last;
    if (step_at != std::string_view::npos) {
      const std::optional<int64_t> step = SaturatingNumber(rest.substr(step_at + 1));
      if (!step) return InvalidArgument(format);
      if (*step < 1) return InvalidArgument("step must be >= 1, got " + std::to_string(*step));
      range.step = *step;
    }
  }
  for (int64_t index : {range.first, range.last}) {
    if (index >= max_array) {
      return InvalidArgument("index " + std::to_string(index) + " is over the limit " +
                             std::to_string(int64_t{max_array} - 1));
    }
  }
  if (range.first > range.last) {
    return InvalidArgument("range " + std::to_string(range.first) + "-" +
                           std::to_string(range.last) + " is decreasing");
  }
  return range;
}

Result<std::optional<int32_t>> ParseArrayLimit(std::string_view text, int32_t max_array) {
  const std::optional<int64_t> limit = SaturatingNumber(text);
  if (!limit || *limit < 1 || *limit > max_array) {
    return InvalidArgument("%N (at most N at once) must be " + Range(1, max_array) + ", got " +
                           Quote(text));
  }
  return std::optional<int32_t>(static_cast<int32_t>(*limit));
}

}  // namespace

Result<std::pair<std::vector<int32_t>, std::optional<int32_t>>> ParseArraySpec(
    std::string_view spec, int32_t max_array) {
  if (spec.size() > kMaxArraySpecChars) {
    return InvalidArgument("spec of " + std::to_string(spec.size()) + " characters, limit " +
                           std::to_string(kMaxArraySpecChars));
  }
  if (spec.empty()) {
    return InvalidArgument("empty spec; expected e.g. 0-9, 1,3,5-7, 0-15:4 or 0-9%2");
  }
  std::optional<int32_t> max_running;
  const size_t percent = spec.find('%');
  if (percent != std::string_view::npos) {
    BERTH_ASSIGN_OR_RETURN(max_running, ParseArrayLimit(spec.substr(percent + 1), max_array));
    spec = spec.substr(0, percent);
  }
  std::vector<ArrayRange> ranges;
  int64_t highest = 0;
  size_t start = 0;
  while (true) {
    const size_t comma = spec.find(',', start);
    BERTH_ASSIGN_OR_RETURN(ArrayRange range,
                           ParseArrayItem(spec.substr(start, comma - start), max_array));
    highest = std::max(highest, range.last);
    ranges.push_back(range);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  // Marking, not appending, keeps overlapping items ("0-9999,0-9999,...")
  // from growing the list past max_array; every index is below max_array.
  std::vector<bool> chosen(static_cast<size_t>(highest) + 1, false);
  for (const ArrayRange& range : ranges) {
    for (int64_t index = range.first; index <= range.last; index += range.step) {
      chosen[static_cast<size_t>(index)] = true;
    }
  }
  std::vector<int32_t> indices;
  for (size_t index = 0; index < chosen.size(); ++index) {
    if (chosen[index]) indices.push_back(static_cast<int32_t>(index));
  }
  return std::pair(std::move(indices), max_running);
}

Result<store::Dependency> ParseDependency(std::string_view text) {
  const std::string format =
      "expected afterok:ID, afterany:ID, afternotok:ID, ID (also ID:KIND) or singleton, got " +
      Quote(text);
  std::string_view kind = "afterok";
  std::string_view id = text;
  const size_t colon = text.find(':');
  if (colon != std::string_view::npos) {
    const std::string_view head = text.substr(0, colon);
    const std::string_view tail = text.substr(colon + 1);
    if (tail.find(':') != std::string_view::npos) return InvalidArgument(format);
    const bool id_first = IsDigits(head);
    kind = id_first ? tail : head;
    id = id_first ? head : tail;
  } else if (!IsDigits(text)) {
    return InvalidArgument(format);
  }
  store::Dependency dependency;
  if (kind == "afterok") {
    dependency.kind = store::DependencyKind::kAfterOk;
  } else if (kind == "afterany") {
    dependency.kind = store::DependencyKind::kAfterAny;
  } else if (kind == "afternotok") {
    dependency.kind = store::DependencyKind::kAfterNotOk;
  } else {
    return InvalidArgument("unknown kind " + Quote(kind) +
                           " (known: afterany, afternotok, afterok)");
  }
  const std::optional<int64_t> number = SaturatingNumber(id);
  if (!number || *number < 1 || *number > kMaxJobId) {
    return InvalidArgument("job id must be a positive integer, got " + Quote(id));
  }
  dependency.job = core::JobId{*number};
  return dependency;
}

}  // namespace berth::server
