#include "core/constraint.h"

#include <algorithm>
#include <set>
#include <utility>

#include "common/check.h"
#include "common/printable.h"

namespace berth::core {
namespace {

bool NameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.' || c == ':' || c == '/' || c == '+' || c == '=';
}

// Deep enough for any expression a person writes; bounds the recursion of
// parsing and evaluation on hostile input.
constexpr int kMaxDepth = 64;
constexpr size_t kMaxLength = 1024;

}  // namespace

// Recursive descent over the grammar of the header; every error names the
// 1-based position where the text stopped making sense.
class FeatureExpression::Parser {
 public:
  Parser(std::string_view text, std::string_view field, FeatureExpression& out)
      : text_(text), field_(field), out_(out) {}

  Status Run() {
    if (text_.empty()) return InvalidArgument(std::string(field_) + ": must not be empty");
    if (text_.size() > kMaxLength) {
      return InvalidArgument(std::string(field_) + ": longer than " + std::to_string(kMaxLength) +
                             " characters");
    }
    out_.terms_.emplace_back();  // the root, filled in below
    BERTH_ASSIGN_OR_RETURN(int root, Expression(0));
    if (pos_ != text_.size()) return Unexpected("'&', '|' or the end");
    out_.terms_[0] = out_.terms_[static_cast<size_t>(root)];
    return Status::Ok();
  }

 private:
  Result<int> Expression(int depth) { return Binary(Op::kOr, '|', depth); }

  // term ('op' term)*, where a term is the next tighter level.
  Result<int> Binary(Op op, char symbol, int depth) {
    if (depth > kMaxDepth) return Error("nested too deeply");
    auto operand = [&]() -> Result<int> {
      return op == Op::kOr ? Binary(Op::kAnd, '&', depth + 1) : Factor(depth + 1);
    };
    BERTH_ASSIGN_OR_RETURN(int first, operand());
    if (Peek() != symbol) return first;
    Term term;
    term.op = op;
    term.children.push_back(first);
    while (Peek() == symbol) {
      ++pos_;
      BERTH_ASSIGN_OR_RETURN(int next, operand());
      term.children.push_back(next);
    }
    return Add(std::move(term));
  }

  Result<int> Factor(int depth) {
    if (depth > kMaxDepth) return Error("nested too deeply");
    const char c = Peek();
    if (c == '!') {
      ++pos_;
      BERTH_ASSIGN_OR_RETURN(int operand, Factor(depth + 1));
      Term term;
      term.op = Op::kNot;
      term.children.push_back(operand);
      return Add(std::move(term));
    }
    if (c == '(') {
      ++pos_;
      BERTH_ASSIGN_OR_RETURN(int inner, Expression(depth + 1));
      if (Peek() != ')') return Unexpected("')'");
      ++pos_;
      return inner;
    }
    if (c == '[') {
      return Error("'[...]' (Slurm's matching OR) is not supported; use '|'");
    }
    const size_t start = pos_;
    while (pos_ < text_.size() && NameChar(text_[pos_])) ++pos_;
    if (pos_ == start) return Unexpected("a feature name, '!' or '('");
    if (Peek() == '*') return Error("feature counts ('name*N') are not supported");
    Term term;
    term.name = std::string(text_.substr(start, pos_ - start));
    return Add(std::move(term));
  }

  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  int Add(Term term) {
    out_.terms_.push_back(std::move(term));
    return static_cast<int>(out_.terms_.size() - 1);
  }

  Status Unexpected(std::string_view expected) {
    const std::string found = pos_ < text_.size() ? "'" + Printable(text_.substr(pos_, 1), 4) + "'"
                                                  : std::string("the end");
    return Error("expected " + std::string(expected) + ", found " + found);
  }

  Status Error(const std::string& what) {
    return InvalidArgument(std::string(field_) + ": " + what + " at position " +
                           std::to_string(pos_ + 1) + " of '" + Around() + "'");
  }

  // The text, or where it is long the 64 bytes around the position: a
  // message stays short whatever was sent (each byte may be written as
  // \xNN).
  std::string Around() const {
    if (text_.size() <= kQuotedBytes) return Printable(text_, 4 * kQuotedBytes);
    const size_t start = pos_ > kQuotedBytes / 2 ? pos_ - kQuotedBytes / 2 : 0;
    const std::string_view part = text_.substr(start, kQuotedBytes);
    return (start > 0 ? "..." : "") + Printable(part, 4 * kQuotedBytes) +
           (start + part.size() < text_.size() ? "..." : "");
  }
  static constexpr size_t kQuotedBytes = 64;

  std::string_view text_;
  std::string_view field_;
  FeatureExpression& out_;
  size_t pos_ = 0;
};

Result<FeatureExpression> FeatureExpression::Parse(std::string_view text, std::string_view field) {
  FeatureExpression expression;
  expression.text_ = std::string(text);
  Parser parser(text, field, expression);
  BERTH_RETURN_IF_ERROR(parser.Run());
  return expression;
}

bool FeatureExpression::Matches(const NodeSpec& node) const {
  BERTH_CHECK(!terms_.empty()) << "matching an expression that was never parsed";
  return Evaluate(0, node);
}

bool FeatureExpression::Evaluate(int index, const NodeSpec& node) const {
  const Term& term = terms_[static_cast<size_t>(index)];
  switch (term.op) {
    case Op::kName:
      return HasFeature(node, term.name);
    case Op::kNot:
      return !Evaluate(term.children.front(), node);
    case Op::kAnd:
      return std::all_of(term.children.begin(), term.children.end(),
                         [&](int child) { return Evaluate(child, node); });
    case Op::kOr:
      return std::any_of(term.children.begin(), term.children.end(),
                         [&](int child) { return Evaluate(child, node); });
  }
  return false;
}

std::vector<std::string> FeatureExpression::Names() const {
  std::set<std::string> names;
  for (const Term& term : terms_) {
    if (term.op == Op::kName) names.insert(term.name);
  }
  return {names.begin(), names.end()};
}

bool IsFeatureName(std::string_view name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), NameChar);
}

bool HasFeature(const NodeSpec& node, std::string_view name) {
  if (node.features.contains(name)) return true;
  const size_t equals = name.find('=');
  if (equals == std::string_view::npos) return false;
  const auto label = node.labels.find(std::string(name.substr(0, equals)));
  return label != node.labels.end() && label->second == name.substr(equals + 1);
}

}  // namespace berth::core
