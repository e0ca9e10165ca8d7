#include "server/strict_json.h"

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "server/spec_text.h"

namespace berth::server::strict_json {

using namespace spec_text;  // NOLINT: the parsers' shared vocabulary

namespace {

// --- exact decimals ---

// The number written as `text` (JSON number syntax) times 10^scale, when that
// is an integer that fits in int64: "0.5" at scale 3 is 500, "1e-3" is 1,
// "0.0005" is nullopt (finer than the scale). No floating point, so
// 0.1 + 0.2 surprises cannot happen.
std::optional<int64_t> ScaledDecimal(std::string_view text, int scale) {
  size_t i = 0;
  const bool negative = i < text.size() && text[i] == '-';
  if (negative) ++i;
  auto is_digit = [&](size_t at) { return at < text.size() && text[at] >= '0' && text[at] <= '9'; };
  std::string digits;
  int64_t exponent = scale;
  while (is_digit(i)) digits.push_back(text[i++]);
  if (digits.empty()) return std::nullopt;
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (!is_digit(i)) return std::nullopt;
    while (is_digit(i)) {
      digits.push_back(text[i++]);
      --exponent;
    }
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    int64_t sign = 1;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) sign = text[i++] == '-' ? -1 : 1;
    if (!is_digit(i)) return std::nullopt;
    int64_t written = 0;
    while (is_digit(i)) written = std::min<int64_t>(1'000'000, written * 10 + (text[i++] - '0'));
    exponent += sign * written;
  }
  if (i != text.size()) return std::nullopt;

  const size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return 0;
  digits.erase(0, first);
  if (exponent < 0) {
    // Dropping digits is exact only when they are zeros.
    const auto drop = static_cast<uint64_t>(-exponent);
    if (drop >= digits.size()) return std::nullopt;
    const size_t keep = digits.size() - static_cast<size_t>(drop);
    if (digits.find_first_not_of('0', keep) != std::string::npos) return std::nullopt;
    digits.resize(keep);
  } else {
    if (exponent > 18) return std::nullopt;
    digits.append(static_cast<size_t>(exponent), '0');
  }
  if (digits.size() > 18) return std::nullopt;  // 10^18 - 1 < INT64_MAX
  int64_t value = 0;
  for (char c : digits) value = value * 10 + (c - '0');
  return negative ? -value : value;
}

// --- the DOM builder ---

// Parse's DOM, built from nlohmann's SAX events (see strict_json.h for how
// it differs from nlohmann's own). Errors never throw: they stop the parse
// and are kept.
class StrictDomBuilder final : public nlohmann::json_sax<Json> {
 public:
  explicit StrictDomBuilder(size_t max_depth) : max_depth_(max_depth) {}

  // Parses `text` into root(); the Status names what is wrong.
  Status Parse(std::string_view text) {
    if (Json::sax_parse(text.begin(), text.end(), this)) return Status::Ok();
    return InvalidArgument(error_.empty() ? "body: invalid JSON" : error_);
  }
  const Json& root() const { return root_; }

  bool null() override { return Add(Json(nullptr)); }
  bool boolean(bool value) override { return Add(Json(value)); }
  bool number_integer(number_integer_t value) override { return Add(Json(value)); }
  bool number_unsigned(number_unsigned_t value) override { return Add(Json(value)); }
  bool number_float(number_float_t /*value*/, const string_t& text) override {
    return Add(Json::binary(Json::binary_t::container_type(text.begin(), text.end())));
  }
  bool string(string_t& value) override { return Add(Json(std::move(value))); }
  bool binary(binary_t& /*value*/) override {
    error_ = "body: unexpected binary value";  // JSON text has none
    return false;
  }
  bool start_object(std::size_t /*elements*/) override { return Open(Json::object()); }
  bool key(string_t& key) override {
    if (stack_.back()->contains(key)) {
      error_ = stack_.size() == 1 ? Printable(key, kQuotedChars) + ": duplicate field"
                                  : labels_.back() + ": duplicate key " + Quote(key);
      return false;
    }
    key_ = std::move(key);
    return true;
  }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t /*elements*/) override { return Open(Json::array()); }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const Json::exception& error) override {
    // nlohmann counts the failing byte (or the end) as read; report its
    // 0-based offset, which is the body's length when the body ends early.
    const size_t offset = position > 0 ? position - 1 : 0;
    error_ = "body: invalid JSON at byte " + std::to_string(offset) + ": " +
             Printable(WithoutPrefix(error.what()), 160);
    return false;
  }

 private:
  // nlohmann's "[json.exception.parse_error.101] parse error at line 1,
  // column 2: " is noise next to the byte offset; keep what follows.
  static std::string_view WithoutPrefix(std::string_view what) {
    const size_t at = what.find("parse error");
    if (at == std::string_view::npos) return what;
    const size_t colon = what.find(": ", at);
    return colon == std::string_view::npos ? what : what.substr(colon + 2);
  }

  // Where the next value goes: the root, the end of the open array, or the
  // last key of the open object. Earlier slots stay put while a child is
  // open, so the pointers on stack_ remain valid.
  Json* Insert(Json value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(value));
      return &top.back();
    }
    Json& slot = top[key_];
    slot = std::move(value);
    return &slot;
  }
  bool Add(Json value) {
    Insert(std::move(value));
    return true;
  }
  bool Open(Json container) {
    if (stack_.size() >= max_depth_) {
      error_ = "body: nested deeper than " + std::to_string(max_depth_) + " levels";
      return false;
    }
    std::string label;
    if (!stack_.empty()) {
      const Json& top = *stack_.back();
      label = top.is_array()       ? labels_.back() + "[" + std::to_string(top.size()) + "]"
              : stack_.size() == 1 ? Printable(key_, kQuotedChars)
                                   : labels_.back() + "." + Printable(key_, kQuotedChars);
      label = Printable(label, kMaxLabelChars);  // already printable; only cut
    }
    stack_.push_back(Insert(std::move(container)));
    labels_.push_back(std::move(label));
    return true;
  }
  bool Close() {
    stack_.pop_back();
    labels_.pop_back();
    return true;
  }

  static constexpr size_t kMaxLabelChars = 128;

  size_t max_depth_;
  Json root_;
  std::vector<Json*> stack_;         // the open containers, outermost first
  std::vector<std::string> labels_;  // their names in messages: "env", "command[0]"
  std::string key_;                  // the last key of the innermost open object
  std::string error_;
};

}  // namespace

Result<Json> Parse(std::string_view text, size_t max_depth) {
  StrictDomBuilder builder(max_depth);
  BERTH_RETURN_IF_ERROR(builder.Parse(text));
  return builder.root();
}

// --- typed field access ---

std::string Got(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "number " + value.dump();
    case Json::value_t::binary: {
      const auto& bytes = value.get_binary();
      return "number " + Printable(std::string(bytes.begin(), bytes.end()), kQuotedChars);
    }
    case Json::value_t::string:
      return "string";
    case Json::value_t::array:
      return "array";
    case Json::value_t::object:
      return "object";
    default:
      return "unknown";
  }
}

bool IsNumber(const Json& value) { return value.is_number_integer() || value.is_binary(); }

std::optional<std::string> NumberText(const Json& value) {
  if (value.is_number_integer()) return value.dump();
  if (value.is_binary()) {
    const auto& bytes = value.get_binary();
    return std::string(bytes.begin(), bytes.end());
  }
  return std::nullopt;
}

Status TypeError(std::string_view field, std::string_view expected, const Json& value) {
  return InvalidArgument(std::string(field) + ": expected " + std::string(expected) + ", got " +
                         Got(value));
}

Status RangeError(std::string_view field, std::string_view range, std::string_view got) {
  return InvalidArgument(std::string(field) + ": must be " + std::string(range) + ", got " +
                         std::string(got));
}

Result<int64_t> ReadInteger(const Json& value, std::string_view field, int64_t lo, int64_t hi,
                            std::string_view range) {
  const std::optional<std::string> text = NumberText(value);
  const bool integral = value.is_number_integer() ||
                        (text && IsDigits(text->front() == '-' ? text->substr(1) : *text));
  if (!integral) return TypeError(field, "an integer", value);
  const auto* as_signed = value.get_ptr<const Json::number_integer_t*>();
  const auto* as_unsigned = value.get_ptr<const Json::number_unsigned_t*>();
  std::optional<int64_t> number;
  if (as_signed != nullptr) number = *as_signed;
  if (as_unsigned != nullptr && *as_unsigned <= uint64_t{std::numeric_limits<int64_t>::max()}) {
    number = static_cast<int64_t>(*as_unsigned);
  }
  if (!number || *number < lo || *number > hi) {
    return RangeError(field, range.empty() ? Range(lo, hi) : std::string(range),
                      Printable(*text, kQuotedChars));
  }
  return *number;
}

Result<int64_t> ReadDecimal(const Json& value, std::string_view field, int scale, int64_t lo,
                            int64_t hi, std::string_view range) {
  const std::optional<std::string> text = NumberText(value);
  if (!text) return TypeError(field, "a number", value);
  const std::optional<int64_t> scaled = ScaledDecimal(*text, scale);
  if (!scaled || *scaled < lo || *scaled > hi) {
    return RangeError(field, range, Printable(*text, kQuotedChars));
  }
  return *scaled;
}

Result<bool> ReadBool(const Json& value, std::string_view field) {
  if (!value.is_boolean()) return TypeError(field, "a boolean", value);
  return value.get<bool>();
}

Result<std::string> ReadString(const Json& value, std::string_view field, size_t max_bytes) {
  const auto* text = value.get_ptr<const Json::string_t*>();
  if (text == nullptr) return TypeError(field, "a string", value);
  if (text->size() > max_bytes) {
    return InvalidArgument(std::string(field) + ": " + std::to_string(text->size()) +
                           " bytes, limit " + std::to_string(max_bytes));
  }
  if (text->find('\0') != std::string::npos) {
    return InvalidArgument(std::string(field) + ": must not contain NUL");
  }
  return *text;
}

Result<std::string> ReadLabel(const Json& value, std::string_view field, size_t max_bytes) {
  BERTH_ASSIGN_OR_RETURN(std::string text, ReadString(value, field, max_bytes));
  const bool has_control = std::any_of(text.begin(), text.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte < 0x20 || byte == 0x7f;
  });
  if (has_control) {
    return InvalidArgument(std::string(field) + ": must not contain control characters, got " +
                           Quote(text));
  }
  return text;
}

}  // namespace berth::server::strict_json
