#include "cli/kube_quantity.h"

#include <array>
#include <cctype>
#include <limits>
#include <optional>
#include <string>

namespace berth::cli {
namespace {

// A quantity's exact value: mantissa x 10^decimal x 2^binary.
struct Quantity {
  uint64_t mantissa = 0;
  int decimal = 0;
  int binary = 0;
};

constexpr std::string_view kExpected = "a Kubernetes quantity such as 500m, 2, 4Gi or 1.5e9";
// More digits than this cannot be held exactly, and no request needs them.
constexpr size_t kMaxDigits = 18;

Status Bad(std::string_view path, std::string_view why, std::string_view text) {
  return InvalidArgument(std::string(path) + ": expected " + std::string(why) + ", got '" +
                         std::string(text) + "'");
}

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// The suffix's power of ten or of two; nullopt if it is none of them.
std::optional<Quantity> Suffix(std::string_view suffix) {
  struct Named {
    std::string_view name;
    int decimal;
    int binary;
  };
  static constexpr std::array<Named, 14> kSuffixes = {{{"", 0, 0},
                                                       {"m", -3, 0},
                                                       {"k", 3, 0},
                                                       {"M", 6, 0},
                                                       {"G", 9, 0},
                                                       {"T", 12, 0},
                                                       {"P", 15, 0},
                                                       {"E", 18, 0},
                                                       {"Ki", 0, 10},
                                                       {"Mi", 0, 20},
                                                       {"Gi", 0, 30},
                                                       {"Ti", 0, 40},
                                                       {"Pi", 0, 50},
                                                       {"Ei", 0, 60}}};
  for (const Named& named : kSuffixes) {
    if (named.name == suffix) return Quantity{0, named.decimal, named.binary};
  }
  if (suffix.size() < 2 || (suffix[0] != 'e' && suffix[0] != 'E')) return std::nullopt;
  std::string_view exponent = suffix.substr(1);
  const bool negative = exponent[0] == '-';
  if (exponent[0] == '-' || exponent[0] == '+') exponent.remove_prefix(1);
  if (exponent.empty() || exponent.size() > 3) return std::nullopt;
  int value = 0;
  for (char c : exponent) {
    if (!IsDigit(c)) return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return Quantity{0, negative ? -value : value, 0};
}

Result<Quantity> Parse(std::string_view text, std::string_view path) {
  std::string_view rest = text;
  if (!rest.empty() && rest[0] == '+') rest.remove_prefix(1);
  if (!rest.empty() && rest[0] == '-') return Bad(path, "a quantity >= 0", text);
  Quantity quantity;
  std::string digits;
  bool seen_digit = false;
  bool seen_point = false;
  size_t at = 0;
  for (; at < rest.size(); ++at) {
    const char c = rest[at];
    if (c == '.' && !seen_point) {
      seen_point = true;
    } else if (IsDigit(c)) {
      seen_digit = true;
      if (seen_point) --quantity.decimal;
      if (!digits.empty() || c != '0') digits += c;
    } else {
      break;
    }
  }
  if (!seen_digit) return Bad(path, kExpected, text);
  if (digits.size() > kMaxDigits) return Bad(path, "at most 18 significant digits", text);
  for (char c : digits) quantity.mantissa = quantity.mantissa * 10 + static_cast<uint64_t>(c - '0');
  std::optional<Quantity> suffix = Suffix(rest.substr(at));
  if (!suffix) return Bad(path, kExpected, text);
  quantity.decimal += suffix->decimal;
  quantity.binary = suffix->binary;
  return quantity;
}

enum class Rounding { kUp, kExact };

// quantity x 10^decimal x 2^binary in whole units, rounded as asked.
// Multiplications come first so that no precision is lost; ceil(ceil(x/a)/b)
// is ceil(x/(a*b)), so the divisions may round one at a time.
Result<int64_t> Scale(Quantity quantity, int decimal, int binary, Rounding rounding,
                      std::string_view path, std::string_view text) {
  uint64_t value = quantity.mantissa;
  bool inexact = false;
  const auto multiply = [&](uint64_t factor, int times) {
    for (int i = 0; i < times; ++i) {
      if (__builtin_mul_overflow(value, factor, &value)) return false;
    }
    return true;
  };
  const auto divide = [&](uint64_t divisor, int times) {
    for (int i = 0; i < times && value != 0; ++i) {
      if (value % divisor != 0) inexact = true;
      value = value / divisor + (value % divisor != 0 ? 1 : 0);
    }
  };
  const int tens = quantity.decimal + decimal;
  const int twos = quantity.binary + binary;
  if (!multiply(10, tens > 0 ? tens : 0) || !multiply(2, twos > 0 ? twos : 0) ||
      value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Bad(path, "a smaller quantity", text);
  }
  divide(10, tens < 0 ? -tens : 0);
  divide(2, twos < 0 ? -twos : 0);
  if (inexact && rounding == Rounding::kExact) return Bad(path, "a whole number", text);
  return static_cast<int64_t>(value);
}

}  // namespace

Result<int64_t> KubeMilliCpu(std::string_view text, std::string_view path) {
  BERTH_ASSIGN_OR_RETURN(Quantity quantity, Parse(text, path));
  return Scale(quantity, 3, 0, Rounding::kUp, path, text);
}

Result<int64_t> KubeMemoryMiB(std::string_view text, std::string_view path) {
  BERTH_ASSIGN_OR_RETURN(Quantity quantity, Parse(text, path));
  return Scale(quantity, 0, -20, Rounding::kUp, path, text);
}

Result<int64_t> KubeWholeCount(std::string_view text, std::string_view path) {
  BERTH_ASSIGN_OR_RETURN(Quantity quantity, Parse(text, path));
  return Scale(quantity, 0, 0, Rounding::kExact, path, text);
}

}  // namespace berth::cli
