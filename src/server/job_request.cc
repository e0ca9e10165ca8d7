#include "server/job_request.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <exception>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "core/constraint.h"
#include "core/ids.h"
#include "core/resources.h"
#include "core/time.h"
#include "server/hostlist.h"
#include "server/spec_text.h"

namespace berth::server {
namespace {

using Json = nlohmann::json;
using namespace spec_text;  // NOLINT: the parsers' shared vocabulary

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

// --- strict JSON ---

// Builds a DOM as nlohmann's own parser does, with three differences the API
// needs: a decimal number keeps its text (stored as a `binary` value, which
// JSON text can never produce) so that `"cpus": 0.1` is 100 millicores
// exactly; a repeated key is an error instead of last-one-wins; and nesting
// is bounded. Errors never throw: they stop the parse and are kept.
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

// --- typed field access ---

// A value's type and, for numbers, the value itself, as messages say it.
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

// JSON numbers: integers as nlohmann reads them, decimals as their text.
bool IsNumber(const Json& value) { return value.is_number_integer() || value.is_binary(); }

// The text of a JSON number as written (integers print exactly), or nullopt
// for any other type.
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

// An integer in [lo, hi]; `range` describes the bounds in the message when
// "lo..hi" would not read well.
Result<int64_t> ReadInteger(const Json& value, std::string_view field, int64_t lo, int64_t hi,
                            std::string_view range = {}) {
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

// A number, integer or decimal, times 10^scale exactly, within [lo, hi]
// (scaled). `range` says the bounds in the user's units for the message.
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

// A string of at most `max_bytes`, without NUL (argv, environment and paths
// cannot carry one).
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

// A string shown in tables (name, gpu_type): no control characters.
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

// --- the schema ---

// Sorted, so that the "known:" list reads the same every time.
constexpr std::array<std::string_view, 28> kKnownFields = {
    "array",       "command",      "constraint",
    "cpus",        "depends_on",   "env",
    "estimate_s",  "exclude",      "gpu_milli",
    "gpu_type",    "gpus",         "gpus_in_one_group",
    "grace_s",     "hold",         "idempotency_key",
    "memory_mib",  "name",         "nodelist",
    "preemptible", "priority",     "queue",
    "requeue",     "retries",      "script",
    "tasks",       "time_limit_s", "wait_for_nodes",
    "workdir",
};

static_assert(std::is_sorted(kKnownFields.begin(), kKnownFields.end()));

Status CheckKnownFields(const Json& body) {
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (std::binary_search(kKnownFields.begin(), kKnownFields.end(), it.key())) continue;
    std::string known;
    for (std::string_view field : kKnownFields) {
      known += (known.empty() ? "" : ", ") + std::string(field);
    }
    return InvalidArgument("unknown field " + Quote(it.key()) + " (known: " + known + ")");
  }
  return Status::Ok();
}

bool IsQueueName(std::string_view name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

bool IsEnvName(std::string_view name) {
  auto letter = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  return !name.empty() && letter(name.front()) &&
         std::all_of(name.begin(), name.end(),
                     [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

constexpr int64_t kMicrosPerSecond = 1'000'000;

// Reads one validated body into a JobRequest, field by field in a fixed
// order; the first problem is the answer.
class RequestReader {
 public:
  RequestReader(const Json& body, const SubmissionLimits& limits) : body_(body), limits_(limits) {}

  Result<Submission> Read(size_t body_bytes) {
    BERTH_RETURN_IF_ERROR(ReadProgram());
    BERTH_RETURN_IF_ERROR(ReadResources());
    BERTH_RETURN_IF_ERROR(ReadPlacement());
    BERTH_RETURN_IF_ERROR(ReadScheduling());
    BERTH_RETURN_IF_ERROR(ReadDependencies());
    BERTH_ASSIGN_OR_RETURN(auto array, ReadArray(body_bytes));
    BERTH_RETURN_IF_ERROR(ReadEnvironment());
    BERTH_RETURN_IF_ERROR(ReadOptions());

    Submission submission;
    if (const Json* key = Find("idempotency_key")) {
      BERTH_ASSIGN_OR_RETURN(submission.idempotency_key,
                             ReadString(*key, "idempotency_key", kMaxIdempotencyKey));
      const std::string& text = submission.idempotency_key;
      const bool visible =
          std::all_of(text.begin(), text.end(), [](char c) { return c > 0x20 && c < 0x7f; });
      if (text.empty() || !visible) {
        return InvalidArgument("idempotency_key: must be 1..128 visible ASCII characters, got " +
                               Quote(text));
      }
    }
    if (!array) {
      submission.jobs.push_back(std::move(request_));
      return submission;
    }
    submission.array_max_running = array->second;
    submission.jobs.reserve(array->first.size());
    for (int32_t index : array->first) {
      submission.jobs.push_back(request_);
      submission.jobs.back().array_index = index;
    }
    return submission;
  }

 private:
  static constexpr size_t kMaxIdempotencyKey = 128;
  static constexpr size_t kMaxConstraint = 1024;
  static constexpr size_t kMaxNodeText = 16 << 10;
  static constexpr size_t kMaxNodeNames = 4096;

  // The field's value, or nullptr when it is absent or null.
  const Json* Find(const char* field) const {
    const auto it = body_.find(field);
    return it == body_.end() || it->is_null() ? nullptr : &*it;
  }

  // name, then exactly one of command and script.
  Status ReadProgram() {
    if (const Json* name = Find("name")) {
      BERTH_ASSIGN_OR_RETURN(request_.name, ReadLabel(*name, "name", limits_.max_name_chars));
    }
    const Json* command = Find("command");
    const Json* script = Find("script");
    if (command != nullptr && script != nullptr) {
      return InvalidArgument("command: give 'command' or 'script', not both");
    }
    if (command == nullptr && script == nullptr) {
      return InvalidArgument("command: required (an argv array), or give 'script'");
    }
    if (script != nullptr) {
      BERTH_ASSIGN_OR_RETURN(request_.script,
                             ReadString(*script, "script", limits_.max_script_bytes));
      if (request_.script.empty()) return InvalidArgument("script: must not be empty");
      return Status::Ok();
    }
    if (!command->is_array()) return TypeError("command", "an array of strings", *command);
    if (command->empty() || command->size() > limits_.max_command_args) {
      return RangeError("command", "1.." + std::to_string(limits_.max_command_args) + " arguments",
                        std::to_string(command->size()));
    }
    for (size_t i = 0; i < command->size(); ++i) {
      const std::string field = "command[" + std::to_string(i) + "]";
      BERTH_ASSIGN_OR_RETURN(std::string arg, ReadString((*command)[i], field, limits_.max_string));
      request_.command.push_back(std::move(arg));
    }
    if (request_.command.front().empty()) {
      return InvalidArgument("command[0]: the program must not be empty");
    }
    return Status::Ok();
  }

  // tasks, gpus or gpu_milli, gpu_type, cpus, memory_mib.
  Status ReadResources() {
    if (const Json* tasks = Find("tasks")) {
      BERTH_ASSIGN_OR_RETURN(int64_t n, ReadInteger(*tasks, "tasks", 1, limits_.max_tasks));
      request_.tasks = static_cast<int32_t>(n);
    }
    const Json* gpus = Find("gpus");
    const Json* gpu_milli = Find("gpu_milli");
    if (gpus != nullptr && gpu_milli != nullptr) {
      return InvalidArgument(
          "gpu_milli: give 'gpus' (whole GPUs) or 'gpu_milli' (a share of one GPU), not both");
    }
    if (gpus != nullptr) {
      BERTH_ASSIGN_OR_RETURN(int64_t n, ReadInteger(*gpus, "gpus", 0, limits_.max_gpus_per_task));
      request_.task.gpu = core::WholeGpus(n);
    }
    if (gpu_milli != nullptr) {
      BERTH_ASSIGN_OR_RETURN(int64_t milli, ReadInteger(*gpu_milli, "gpu_milli", 1, 999));
      request_.task.gpu = core::MilliGpu(milli);
    }
    if (const Json* type = Find("gpu_type")) {
      BERTH_ASSIGN_OR_RETURN(request_.gpu_types, ReadModels(*type));
    }
    if (const Json* cpus = Find("cpus")) {
      const std::string range =
          "0.." + std::to_string(limits_.max_cpus) + " cores in steps of 0.001";
      BERTH_ASSIGN_OR_RETURN(int64_t millis,
                             ReadDecimal(*cpus, "cpus", 3, 0, limits_.max_cpus * 1000, range));
      request_.task.cpu = core::MilliCpu(millis);
    }
    if (const Json* memory = Find("memory_mib")) {
      BERTH_ASSIGN_OR_RETURN(int64_t mib,
                             ReadInteger(*memory, "memory_mib", 0, limits_.max_memory_mib));
      request_.task.memory = core::MemoryMiB(mib);
    }
    return Status::Ok();
  }

  // "A100-80GB|H100-80GB": models, any of which will do.
  Result<std::vector<std::string>> ReadModels(const Json& value) const {
    BERTH_ASSIGN_OR_RETURN(std::string text, ReadLabel(value, "gpu_type", limits_.max_name_chars));
    if (text.empty()) return InvalidArgument("gpu_type: must not be empty");
    std::vector<std::string> models;
    for (std::string& model : store::SplitModels(text)) {
      if (model.empty()) {
        return InvalidArgument("gpu_type: an empty model in " + Quote(text) +
                               " (separate models with '|')");
      }
      if (std::find(models.begin(), models.end(), model) == models.end()) {
        models.push_back(std::move(model));
      }
    }
    return models;
  }

  // constraint, nodelist, exclude, gpus_in_one_group: where the job may run
  // besides its model.
  Status ReadPlacement() {
    if (const Json* constraint = Find("constraint")) {
      BERTH_ASSIGN_OR_RETURN(request_.constraint,
                             ReadLabel(*constraint, "constraint", kMaxConstraint));
      BERTH_RETURN_IF_ERROR(core::FeatureExpression::Parse(request_.constraint).status());
    }
    if (const Json* nodes = Find("nodelist")) {
      BERTH_ASSIGN_OR_RETURN(request_.nodelist, ReadNodeNames(*nodes, "nodelist"));
    }
    if (const Json* nodes = Find("exclude")) {
      BERTH_ASSIGN_OR_RETURN(request_.exclude, ReadNodeNames(*nodes, "exclude"));
    }
    if (const Json* grouped = Find("gpus_in_one_group")) {
      BERTH_ASSIGN_OR_RETURN(request_.gpus_in_one_group, ReadBool(*grouped, "gpus_in_one_group"));
    }
    return Status::Ok();
  }

  // A Slurm hostlist ("gpu[01-04],gpu07") or an array of them.
  Result<std::vector<std::string>> ReadNodeNames(const Json& value, const char* field) const {
    std::string text;
    if (value.is_array()) {
      for (size_t i = 0; i < value.size(); ++i) {
        BERTH_ASSIGN_OR_RETURN(
            std::string item,
            ReadLabel(value[i], std::string(field) + "[" + std::to_string(i) + "]", kMaxNodeText));
        text += (text.empty() ? "" : ",") + item;
      }
    } else if (value.is_string()) {
      BERTH_ASSIGN_OR_RETURN(text, ReadLabel(value, field, kMaxNodeText));
    } else {
      return TypeError(field, "a hostlist string or an array of node names", value);
    }
    return ExpandHostlist(text, field, kMaxNodeNames);
  }

  enum class Zero { kAllowed, kRejected };
  // A number of seconds, exact to the microsecond, at most max_s.
  static Result<core::Duration> ReadSeconds(const Json& value, std::string_view field, Zero zero,
                                            int64_t max_s) {
    const std::string range =
        (zero == Zero::kAllowed ? Range(0, max_s)
                                : "more than 0 and at most " + std::to_string(max_s)) +
        " seconds, to the microsecond";
    BERTH_ASSIGN_OR_RETURN(int64_t micros,
                           ReadDecimal(value, field, 6, zero == Zero::kAllowed ? 0 : 1,
                                       max_s * kMicrosPerSecond, range));
    return core::Duration::Micros(micros);
  }

  // priority, queue, time_limit_s, estimate_s, preemptible, grace_s.
  Status ReadScheduling() {
    if (const Json* priority = Find("priority")) {
      BERTH_ASSIGN_OR_RETURN(request_.priority, ReadPriority(*priority));
    }
    if (const Json* queue = Find("queue")) {
      BERTH_ASSIGN_OR_RETURN(request_.queue, ReadString(*queue, "queue", limits_.max_string));
      if (!IsQueueName(request_.queue)) {
        return RangeError("queue", "1..64 characters of [A-Za-z0-9._-]", Quote(request_.queue));
      }
    }
    if (const Json* limit = Find("time_limit_s")) {
      BERTH_ASSIGN_OR_RETURN(request_.time_limit, ReadSeconds(*limit, "time_limit_s",
                                                              Zero::kRejected, limits_.max_time_s));
    }
    if (const Json* estimate = Find("estimate_s")) {
      BERTH_ASSIGN_OR_RETURN(request_.estimate, ReadSeconds(*estimate, "estimate_s",
                                                            Zero::kRejected, limits_.max_time_s));
      if (request_.time_limit && *request_.estimate > *request_.time_limit) {
        return InvalidArgument(
            "estimate_s: must not exceed time_limit_s (the job is stopped there)");
      }
    }
    if (const Json* preemptible = Find("preemptible")) {
      BERTH_ASSIGN_OR_RETURN(request_.preemptible, ReadBool(*preemptible, "preemptible"));
    }
    if (const Json* grace = Find("grace_s")) {
      BERTH_ASSIGN_OR_RETURN(request_.grace,
                             ReadSeconds(*grace, "grace_s", Zero::kAllowed, limits_.max_grace_s));
    }
    return Status::Ok();
  }

  Result<int32_t> ReadPriority(const Json& value) const {
    static constexpr std::array<std::pair<std::string_view, int32_t>, 3> kClasses = {
        {{"low", -100}, {"normal", 0}, {"high", 100}}};
    const std::string range =
        Range(-limits_.max_priority, limits_.max_priority) + " or one of low, normal, high";
    if (const auto* name = value.get_ptr<const Json::string_t*>()) {
      for (const auto& [class_name, priority] : kClasses) {
        if (*name == class_name) return priority;
      }
      return RangeError("priority", range, Quote(*name));
    }
    if (!IsNumber(value)) return TypeError("priority", "an integer or a class name", value);
    const Result<int64_t> number =
        ReadInteger(value, "priority", -limits_.max_priority, limits_.max_priority);
    if (!number.ok())
      return RangeError("priority", range, Printable(*NumberText(value), kQuotedChars));
    return static_cast<int32_t>(*number);
  }

  Status ReadDependencies() {
    const Json* list = Find("depends_on");
    if (list == nullptr) return Status::Ok();
    if (!list->is_array()) return TypeError("depends_on", "an array", *list);
    const auto max = static_cast<size_t>(std::max(limits_.max_dependencies, 0));
    if (list->size() > max) {
      return InvalidArgument("depends_on: " + std::to_string(list->size()) + " entries, limit " +
                             std::to_string(max));
    }
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string field = "depends_on[" + std::to_string(i) + "]";
      BERTH_ASSIGN_OR_RETURN(store::Dependency dependency, ReadDependency((*list)[i], field));
      for (size_t j = 0; j < request_.depends_on.size(); ++j) {
        if (request_.depends_on[j].job != dependency.job) continue;
        return InvalidArgument(field + ": job " + core::ToString(dependency.job) +
                               " already listed in depends_on[" + std::to_string(j) + "]");
      }
      request_.depends_on.push_back(dependency);
    }
    return Status::Ok();
  }

  static Result<store::Dependency> ReadDependency(const Json& value, const std::string& field) {
    if (const auto* text = value.get_ptr<const Json::string_t*>()) {
      Result<store::Dependency> dependency = ParseDependency(*text);
      if (!dependency.ok()) return InvalidArgument(field + ": " + dependency.status().message());
      return dependency;
    }
    if (!IsNumber(value)) return TypeError(field, "a dependency string or a job id", value);
    BERTH_ASSIGN_OR_RETURN(int64_t id,
                           ReadInteger(value, field, 1, kMaxJobId, "a positive job id"));
    return store::Dependency{store::DependencyKind::kAfterOk, core::JobId{id}};
  }

  using ArraySpec = std::pair<std::vector<int32_t>, std::optional<int32_t>>;
  Result<std::optional<ArraySpec>> ReadArray(size_t body_bytes) const {
    const Json* spec = Find("array");
    if (spec == nullptr) return std::optional<ArraySpec>();
    BERTH_ASSIGN_OR_RETURN(std::string text, ReadString(*spec, "array", kMaxArraySpecChars));
    Result<ArraySpec> array = ParseArraySpec(text, limits_.max_array);
    if (!array.ok()) return InvalidArgument("array: " + array.status().message());
    const size_t count = array->first.size();
    if (body_bytes > limits_.max_array_total_bytes / count) {
      return InvalidArgument("array: " + std::to_string(count) + " jobs of a " +
                             std::to_string(body_bytes) + "-byte request exceed the limit of " +
                             std::to_string(limits_.max_array_total_bytes) + " bytes");
    }
    return std::optional<ArraySpec>(std::move(*array));
  }

  Status ReadEnvironment() {
    const Json* env = Find("env");
    if (env == nullptr) return Status::Ok();
    if (!env->is_object()) return TypeError("env", "an object of strings", *env);
    if (env->size() > limits_.max_env) {
      return InvalidArgument("env: " + std::to_string(env->size()) + " entries, limit " +
                             std::to_string(limits_.max_env));
    }
    for (auto it = env->begin(); it != env->end(); ++it) {
      const std::string& name = it.key();
      if (!IsEnvName(name) || name.size() > limits_.max_name_chars) {
        return InvalidArgument("env: invalid name " + Quote(name) + " (must match " +
                               "[A-Za-z_][A-Za-z0-9_]*, at most " +
                               std::to_string(limits_.max_name_chars) + " characters)");
      }
      const std::string field = "env." + Printable(name, kQuotedChars);
      if (name.starts_with("BERTH_")) {
        return InvalidArgument(field + ": reserved (Berth sets BERTH_* variables)");
      }
      if (name == "CUDA_VISIBLE_DEVICES") {
        return InvalidArgument(field + ": reserved (the agent sets it from the placement)");
      }
      BERTH_ASSIGN_OR_RETURN(std::string text, ReadString(it.value(), field, limits_.max_string));
      request_.env.emplace(name, std::move(text));
    }
    return Status::Ok();
  }

  // workdir, retries, requeue, hold, wait_for_nodes.
  Status ReadOptions() {
    if (const Json* workdir = Find("workdir")) {
      BERTH_ASSIGN_OR_RETURN(request_.workdir, ReadString(*workdir, "workdir", limits_.max_string));
      if (!request_.workdir.starts_with('/')) {
        return RangeError("workdir", "an absolute path", Quote(request_.workdir));
      }
    }
    if (const Json* retries = Find("retries")) {
      BERTH_ASSIGN_OR_RETURN(int64_t n, ReadInteger(*retries, "retries", 0, limits_.max_retries));
      request_.retries = static_cast<int32_t>(n);
    }
    if (const Json* requeue = Find("requeue")) {
      BERTH_ASSIGN_OR_RETURN(request_.requeue, ReadBool(*requeue, "requeue"));
    }
    if (const Json* hold = Find("hold")) {
      BERTH_ASSIGN_OR_RETURN(request_.hold, ReadBool(*hold, "hold"));
    }
    if (const Json* wait = Find("wait_for_nodes")) {
      BERTH_ASSIGN_OR_RETURN(request_.wait_for_nodes, ReadBool(*wait, "wait_for_nodes"));
    }
    return Status::Ok();
  }

  const Json& body_;
  const SubmissionLimits& limits_;
  store::JobRequest request_;
};

Result<Submission> ParseValidated(std::string_view json_body, const SubmissionLimits& limits) {
  if (json_body.size() > limits.max_body_bytes) {
    return InvalidArgument("body: " + std::to_string(json_body.size()) + " bytes, limit " +
                           std::to_string(limits.max_body_bytes));
  }
  if (json_body.empty()) return InvalidArgument("body: empty; expected a JSON object");
  StrictDomBuilder builder(limits.max_json_depth);
  BERTH_RETURN_IF_ERROR(builder.Parse(json_body));
  const Json& body = builder.root();
  if (!body.is_object()) return TypeError("body", "a JSON object", body);
  BERTH_RETURN_IF_ERROR(CheckKnownFields(body));
  return RequestReader(body, limits).Read(json_body.size());
}

}  // namespace

Result<Submission> ParseSubmission(std::string_view json_body, const SubmissionLimits& limits) {
  // nlohmann::json reports failures by exception; none may leave this module.
  try {
    return ParseValidated(json_body, limits);
  } catch (const std::exception& e) {
    return Internal("body: the parser failed: " + Printable(e.what(), 160));
  }
}

}  // namespace berth::server
