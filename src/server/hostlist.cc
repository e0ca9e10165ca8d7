#include "server/hostlist.h"

#include <set>
#include <utility>

#include "server/spec_text.h"

namespace berth::server {
namespace {

// The field's text comes back escaped and cut: it may hold any bytes.
using spec_text::Quote;

// One bracket's numbers: [lo, hi] each, printed with `width` digits (0: as is).
struct BracketRange {
  int64_t lo = 0;
  int64_t hi = 0;
  size_t width = 0;
};
// An entry: literal text and bracket groups in turn.
struct Part {
  std::string text;                  // literal, when ranges is empty
  std::vector<BracketRange> ranges;  // a bracket group
};

class Expander {
 public:
  Expander(std::string_view text, std::string_view field, size_t max_names)
      : text_(text), field_(field), max_names_(max_names) {}

  Result<std::vector<std::string>> Run() {
    if (text_.empty()) return Error("must not be empty");
    size_t start = 0;
    int depth = 0;
    for (size_t i = 0; i <= text_.size(); ++i) {
      const char c = i < text_.size() ? text_[i] : ',';
      if (c == '[') ++depth;
      if (c == ']') --depth;
      if ((c != ',' || depth > 0) && i < text_.size()) continue;
      BERTH_RETURN_IF_ERROR(Entry(text_.substr(start, i - start)));
      start = i + 1;
    }
    return std::move(names_);
  }

 private:
  Status Entry(std::string_view entry) {
    if (entry.empty()) return Error("an empty name in " + Quote(text_));
    std::vector<Part> parts;
    size_t i = 0;
    while (i < entry.size()) {
      if (entry[i] == ']') return Error("unmatched ']' in " + Quote(entry));
      if (entry[i] != '[') {
        const size_t end = entry.find_first_of("[]", i);
        parts.push_back(Part{std::string(entry.substr(i, end == entry.npos ? end : end - i)), {}});
        i = end == entry.npos ? entry.size() : end;
        continue;
      }
      const size_t close = entry.find(']', i);
      if (close == entry.npos) return Error("unclosed '[' in " + Quote(entry));
      BERTH_ASSIGN_OR_RETURN(std::vector<BracketRange> ranges,
                             Ranges(entry.substr(i + 1, close - i - 1)));
      parts.push_back(Part{"", std::move(ranges)});
      i = close + 1;
    }
    // Bound the product before building it: every name counts, repeats too.
    size_t count = 1;
    for (const Part& part : parts) {
      if (part.ranges.empty()) continue;
      size_t in_group = 0;
      for (const BracketRange& range : part.ranges) {
        in_group += static_cast<size_t>(range.hi - range.lo + 1);
        if (in_group > max_names_) return TooMany();
      }
      if (count > max_names_ / in_group) return TooMany();
      count *= in_group;
    }
    expanded_ += count;
    if (expanded_ > max_names_) return TooMany();
    std::string name;
    return Emit(parts, 0, name);
  }

  Status Emit(const std::vector<Part>& parts, size_t index, std::string& prefix) {
    if (index == parts.size()) return Add(prefix);
    const Part& part = parts[index];
    const size_t keep = prefix.size();
    if (part.ranges.empty()) {
      prefix += part.text;
      BERTH_RETURN_IF_ERROR(Emit(parts, index + 1, prefix));
    } else {
      for (const BracketRange& range : part.ranges) {
        for (int64_t n = range.lo; n <= range.hi; ++n) {
          std::string digits = std::to_string(n);
          if (digits.size() < range.width) digits.insert(0, range.width - digits.size(), '0');
          prefix += digits;
          BERTH_RETURN_IF_ERROR(Emit(parts, index + 1, prefix));
          prefix.resize(keep);
        }
      }
    }
    prefix.resize(keep);
    return Status::Ok();
  }

  Status Add(const std::string& name) {
    if (name.size() > 64) return Error(Quote(name) + " is longer than 64 characters");
    for (char c : name) {
      if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
        return Error("names must not contain spaces or control characters");
      }
    }
    if (seen_.insert(name).second) names_.push_back(name);
    return Status::Ok();
  }

  Result<std::vector<BracketRange>> Ranges(std::string_view inside) {
    std::vector<BracketRange> ranges;
    if (inside.empty()) return Error("empty brackets '[]'");
    size_t start = 0;
    for (size_t i = 0; i <= inside.size(); ++i) {
      if (i < inside.size() && inside[i] != ',') continue;
      const std::string_view item = inside.substr(start, i - start);
      start = i + 1;
      const size_t dash = item.find('-');
      const std::string_view lo_text = item.substr(0, dash);
      const std::string_view hi_text = dash == item.npos ? lo_text : item.substr(dash + 1);
      BERTH_ASSIGN_OR_RETURN(int64_t lo, Number(lo_text, inside));
      BERTH_ASSIGN_OR_RETURN(int64_t hi, Number(hi_text, inside));
      if (hi < lo) return Error("range " + Quote(item) + " runs backwards");
      const size_t width = lo_text.size() > 1 && lo_text.front() == '0' ? lo_text.size() : 0;
      ranges.push_back(BracketRange{lo, hi, width});
    }
    return ranges;
  }

  Result<int64_t> Number(std::string_view digits, std::string_view inside) {
    if (digits.empty() || digits.size() > 9) {
      return NotANumber(inside);
    }
    int64_t value = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') {
        return NotANumber(inside);
      }
      value = value * 10 + (c - '0');
    }
    return value;
  }

  Status TooMany() {
    return Error("more than " + std::to_string(max_names_) + " names in " + Quote(text_));
  }
  Status NotANumber(std::string_view inside) {
    return Error("expected numbers or ranges like 01-04 inside " +
                 Quote("[" + std::string(inside) + "]"));
  }

  Status Error(const std::string& what) {
    return InvalidArgument(std::string(field_) + ": " + what);
  }

  std::string_view text_;
  std::string_view field_;
  size_t max_names_;
  size_t expanded_ = 0;  // names so far, repeats included
  std::vector<std::string> names_;
  std::set<std::string> seen_;
};

}  // namespace

Result<std::vector<std::string>> ExpandHostlist(std::string_view text, std::string_view field,
                                                size_t max_names) {
  return Expander(text, field, max_names).Run();
}

}  // namespace berth::server
