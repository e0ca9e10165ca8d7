// Node feature expressions: Slurm's `--constraint` ("a100&ib", "a100|h100",
// "(a100|h100)&!preemptible-spot") over the features a node advertises.
//
// Grammar (whitespace is not allowed, as in Slurm):
//   expression := term ('|' term)*          OR
//   term       := factor ('&' factor)*      AND binds tighter than OR
//   factor     := '!' factor | '(' expression ')' | name
//   name       := one or more of  A-Z a-z 0-9 _ - . : / + =
// A name holds for a node that has that feature, or, written `key=value`,
// that carries the label key=value (NodeSpec::features, NodeSpec::labels).
// Slurm's matching OR ("[rack1|rack2]") and feature counts ("ib*2") choose
// among whole sets of nodes, which a per-node test cannot express: they are
// refused with the position, not misread.
//
// Pure; values are immutable once parsed and safe to share between threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "core/node.h"

namespace berth::core {

class FeatureExpression {
 public:
  // The expression, or InvalidArgument naming the position (1-based) and
  // what was expected there, e.g. "constraint: expected a feature name at
  // position 5 of 'a100&'". `field` names the field in messages.
  static Result<FeatureExpression> Parse(std::string_view text,
                                         std::string_view field = "constraint");

  bool Matches(const NodeSpec& node) const;
  // The names the expression mentions, ascending and unique (for messages:
  // "no node has feature 'ib'").
  std::vector<std::string> Names() const;
  const std::string& text() const { return text_; }

 private:
  enum class Op { kName, kNot, kAnd, kOr };
  // A node of the syntax tree; children index into nodes_.
  struct Term {
    Op op = Op::kName;
    std::string name;
    std::vector<int> children;
  };
  class Parser;

  bool Evaluate(int term, const NodeSpec& node) const;

  std::string text_;
  std::vector<Term> terms_;  // terms_[0] is the root
};

// Whether the node has the feature `name` (or the label, for "key=value").
bool HasFeature(const NodeSpec& node, std::string_view name);

// Whether `name` can be a feature: 1..64 characters of the name set above
// (an expression could not name any other).
bool IsFeatureName(std::string_view name);

}  // namespace berth::core
