#include "core/constraint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace berth::core {
namespace {

using ::testing::HasSubstr;

NodeSpec Node(std::vector<std::string> features, std::map<std::string, std::string> labels = {}) {
  NodeSpec node = MakeNodeSpec("n", "A100", 8);
  node.features = {features.begin(), features.end()};
  node.labels = std::move(labels);
  return node;
}

bool Matches(const std::string& text, const NodeSpec& node) {
  Result<FeatureExpression> expression = FeatureExpression::Parse(text);
  EXPECT_TRUE(expression.ok()) << text << ": " << expression.status().message();
  return expression.ok() && expression->Matches(node);
}

std::string ErrorOf(const std::string& text) {
  Result<FeatureExpression> expression = FeatureExpression::Parse(text);
  EXPECT_FALSE(expression.ok()) << text << " parsed";
  return expression.ok() ? "" : expression.status().message();
}

TEST(FeatureExpressionTest, AndOrNotAndParentheses) {
  const NodeSpec a100_ib = Node({"a100", "ib"});
  const NodeSpec h100 = Node({"h100"});
  EXPECT_TRUE(Matches("a100", a100_ib));
  EXPECT_FALSE(Matches("h100", a100_ib));
  EXPECT_TRUE(Matches("a100&ib", a100_ib));
  EXPECT_FALSE(Matches("a100&ib", h100));
  EXPECT_TRUE(Matches("a100|h100", h100));
  EXPECT_TRUE(Matches("!a100", h100));
  EXPECT_FALSE(Matches("!a100", a100_ib));
  // AND binds tighter than OR: h100 | (a100 & nvlink).
  EXPECT_TRUE(Matches("h100|a100&nvlink", h100));
  EXPECT_FALSE(Matches("h100|a100&nvlink", a100_ib));
  EXPECT_FALSE(Matches("(h100|a100)&nvlink", a100_ib));
  EXPECT_TRUE(Matches("(h100|a100)&ib", a100_ib));
  EXPECT_TRUE(Matches("!(h100|v100)&!!ib", a100_ib));
}

TEST(FeatureExpressionTest, NamesMatchFeaturesOrLabels) {
  const NodeSpec node = Node({"ib"}, {{"zone", "eu-1"}, {"rack", "r7"}});
  EXPECT_TRUE(Matches("zone=eu-1", node));
  EXPECT_FALSE(Matches("zone=eu-2", node));
  EXPECT_FALSE(Matches("zone", node)) << "a label's key alone is not a feature";
  EXPECT_TRUE(Matches("zone=eu-1&rack=r7&ib", node));
  EXPECT_TRUE(Matches("gpu_v2.1:x/y+z", Node({"gpu_v2.1:x/y+z"})));
}

TEST(FeatureExpressionTest, NamesListsEachFeatureOnce) {
  Result<FeatureExpression> expression = FeatureExpression::Parse("(ib|nvlink)&!ib&a100");
  ASSERT_TRUE(expression.ok());
  EXPECT_EQ(expression->Names(), (std::vector<std::string>{"a100", "ib", "nvlink"}));
  EXPECT_EQ(expression->text(), "(ib|nvlink)&!ib&a100");
}

TEST(FeatureExpressionTest, ErrorsNameThePositionAndWhatWasExpected) {
  EXPECT_EQ(ErrorOf(""), "constraint: must not be empty");
  EXPECT_EQ(ErrorOf("a100&"),
            "constraint: expected a feature name, '!' or '(', found the end at position 6 of "
            "'a100&'");
  EXPECT_EQ(ErrorOf("&ib"),
            "constraint: expected a feature name, '!' or '(', found '&' at position 1 of '&ib'");
  EXPECT_EQ(ErrorOf("(a|b"), "constraint: expected ')', found the end at position 5 of '(a|b'");
  EXPECT_EQ(ErrorOf("a)b"),
            "constraint: expected '&', '|' or the end, found ')' at position 2 of 'a)b'");
  EXPECT_EQ(ErrorOf("a b"),
            "constraint: expected '&', '|' or the end, found ' ' at position 2 of 'a b'");
  EXPECT_EQ(ErrorOf("a,b"),
            "constraint: expected '&', '|' or the end, found ',' at position 2 of 'a,b'");
  EXPECT_THAT(ErrorOf("[rack1|rack2]"), HasSubstr("matching OR) is not supported"));
  EXPECT_THAT(ErrorOf("[rack1|rack2]"), HasSubstr("at position 1"));
  EXPECT_THAT(ErrorOf("ib*2"),
              HasSubstr("feature counts ('name*N') are not supported at position 3"));
  EXPECT_THAT(FeatureExpression::Parse("a&", "sbatch --constraint").status().message(),
              HasSubstr("sbatch --constraint: expected a feature name"));
}

TEST(FeatureExpressionTest, BytesThatAreNotPrintableAreEscapedInTheMessage) {
  // Found by the fuzzer: the message goes into JSON and onto terminals.
  EXPECT_EQ(ErrorOf("ib&\xdf\x93low"),
            "constraint: expected a feature name, '!' or '(', found '\\xdf' at position 4 of "
            "'ib&\\xdf\\x93low'");
}

TEST(FeatureExpressionTest, ALongTextIsQuotedAroundThePosition) {
  // Found by the fuzzer: 1,000 bytes written as \xNN made a 4 KiB message.
  // 64 bytes are quoted, from 32 before the position.
  std::string escaped;
  for (int i = 0; i < 31; ++i) escaped += "\\x01";
  const std::string message = ErrorOf(std::string(100, 'a') + ")" + std::string(900, '\x01'));
  EXPECT_EQ(message, "constraint: expected '&', '|' or the end, found ')' at position 101 of '..." +
                         std::string(32, 'a') + ")" + escaped + "...'");
  EXPECT_LE(message.size(), 512u);
  EXPECT_EQ(ErrorOf(std::string(64, 'a') + ")"),
            "constraint: expected '&', '|' or the end, found ')' at position 65 of '..." +
                std::string(32, 'a') + ")'");
}

TEST(FeatureExpressionTest, HostileInputIsBounded) {
  EXPECT_THAT(ErrorOf(std::string(200, '(') + "a" + std::string(200, ')')),
              HasSubstr("nested too deeply"));
  EXPECT_THAT(ErrorOf(std::string(100, '!') + "a"), HasSubstr("nested too deeply"));
  EXPECT_THAT(ErrorOf(std::string(2000, 'a')), HasSubstr("longer than 1024 characters"));
  std::string many = "a";
  for (int i = 0; i < 150; ++i) many += "|a" + std::to_string(i);
  EXPECT_TRUE(Matches(many, Node({"a149"})));
}

}  // namespace
}  // namespace berth::core
