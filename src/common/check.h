// BERTH_CHECK: the channel for broken invariants. A failed check is a bug, so
// it prints where and why and aborts; it is never used for bad user input
// (that is what Status is for).
//
// Header-only on purpose: the pure core uses it and links nothing of ours.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

namespace berth::internal {

class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition) {
    stream_ << file << ":" << line << ": CHECK failed: " << condition << " ";
  }
  CheckFailure(const CheckFailure&) = delete;
  CheckFailure& operator=(const CheckFailure&) = delete;
  [[noreturn]] ~CheckFailure() {
    const std::string text = stream_.str();
    std::fprintf(stderr, "%s\n", text.c_str());
    std::fflush(stderr);
    std::abort();
  }
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

// Lets the macro below be a single expression that accepts `<< message`.
struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace berth::internal

#define BERTH_CHECK(condition)                 \
  (condition) ? (void)0                        \
              : ::berth::internal::Voidify() & \
                    ::berth::internal::CheckFailure(__FILE__, __LINE__, #condition).stream()
