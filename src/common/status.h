// Status and Result<T>: the channel for expected failures (bad input,
// missing files, unavailable services). Broken invariants use BERTH_CHECK.
// Header-only, so the pure core can use them and still link nothing of ours.
//
// GCC 12 has no std::expected in C++20, so Result<T> is a small variant over a
// value and a non-OK Status. Codes form a closed set; the server maps them to
// HTTP statuses in one place.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "common/check.h"

namespace berth {

enum class StatusCode {
  kOk,
  kInvalidArgument,     // the caller sent something malformed or out of range
  kNotFound,            // a named thing does not exist
  kAlreadyExists,       // a create collided with an existing thing
  kFailedPrecondition,  // the request is valid but the system is not in a state for it
  kPermissionDenied,    // authenticated but not allowed
  kUnauthenticated,     // no valid credentials
  kResourceExhausted,   // a limit was hit
  kUnavailable,         // a dependency (disk, database, peer) is not reachable now
  kInternal,            // a bug or an unexpected library failure
};

inline std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid_argument";
    case StatusCode::kNotFound:
      return "not_found";
    case StatusCode::kAlreadyExists:
      return "already_exists";
    case StatusCode::kFailedPrecondition:
      return "failed_precondition";
    case StatusCode::kPermissionDenied:
      return "permission_denied";
    case StatusCode::kUnauthenticated:
      return "unauthenticated";
    case StatusCode::kResourceExhausted:
      return "resource_exhausted";
    case StatusCode::kUnavailable:
      return "unavailable";
    case StatusCode::kInternal:
      return "internal";
  }
  return "unknown";
}

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid_argument: tasks: must be 1..1024, got 0"
  std::string ToString() const {
    if (ok()) return "ok";
    return std::string(StatusCodeName(code_)) + ": " + message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message));
}
inline Status NotFound(std::string message) {
  return Status(StatusCode::kNotFound, std::move(message));
}
inline Status FailedPrecondition(std::string message) {
  return Status(StatusCode::kFailedPrecondition, std::move(message));
}
inline Status Unavailable(std::string message) {
  return Status(StatusCode::kUnavailable, std::move(message));
}
inline Status Internal(std::string message) {
  return Status(StatusCode::kInternal, std::move(message));
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : data_(std::move(status)) {  // NOLINT: implicit by design
    BERTH_CHECK(!std::get<Status>(data_).ok()) << "a Result holding a Status must hold an error";
  }

  bool ok() const { return std::holds_alternative<T>(data_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(data_);
  }
  // REQUIRES: ok().
  T& value() & {
    BERTH_CHECK(ok()) << status().ToString();
    return std::get<T>(data_);
  }
  const T& value() const& {
    BERTH_CHECK(ok()) << status().ToString();
    return std::get<T>(data_);
  }
  T&& value() && {
    BERTH_CHECK(ok()) << status().ToString();
    return std::get<T>(std::move(data_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace berth

// Returns from the enclosing function when `expr` (a Status) is not OK.
#define BERTH_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::berth::Status berth_status_ = (expr);        \
    if (!berth_status_.ok()) return berth_status_; \
  } while (false)

#define BERTH_CONCAT_INNER(a, b) a##b
#define BERTH_CONCAT(a, b) BERTH_CONCAT_INNER(a, b)
// `lhs = value of expr` (a Result), or returns its Status from the function.
#define BERTH_ASSIGN_OR_RETURN(lhs, expr) \
  BERTH_ASSIGN_OR_RETURN_IMPL(BERTH_CONCAT(berth_result_, __LINE__), lhs, expr)
#define BERTH_ASSIGN_OR_RETURN_IMPL(result, lhs, expr) \
  auto result = (expr);                                \
  if (!result.ok()) return result.status();            \
  lhs = std::move(result).value()
