#include "server/hostlist.h"

#include <gtest/gtest.h>

namespace berth::server {
namespace {

std::vector<std::string> Expand(const std::string& text) {
  Result<std::vector<std::string>> names = ExpandHostlist(text, "nodelist", 100);
  EXPECT_TRUE(names.ok()) << text << ": " << names.status().message();
  return names.ok() ? *names : std::vector<std::string>{};
}

std::string ErrorOf(const std::string& text, size_t max_names = 100) {
  Result<std::vector<std::string>> names = ExpandHostlist(text, "nodelist", max_names);
  EXPECT_FALSE(names.ok()) << text << " expanded";
  return names.ok() ? "" : names.status().message();
}

using Names = std::vector<std::string>;

TEST(HostlistTest, PlainNamesAndRanges) {
  EXPECT_EQ(Expand("n1"), (Names{"n1"}));
  EXPECT_EQ(Expand("n1,login"), (Names{"n1", "login"}));
  EXPECT_EQ(Expand("gpu[01-04,07],login1"),
            (Names{"gpu01", "gpu02", "gpu03", "gpu04", "gpu07", "login1"}));
  EXPECT_EQ(Expand("n[8-11]"), (Names{"n8", "n9", "n10", "n11"}));
  EXPECT_EQ(Expand("n[098-101]"), (Names{"n098", "n099", "n100", "n101"}));
  EXPECT_EQ(Expand("r[1-2]n[1-2]-ib"), (Names{"r1n1-ib", "r1n2-ib", "r2n1-ib", "r2n2-ib"}));
  EXPECT_EQ(Expand("n[3],n3,n[1-3]"), (Names{"n3", "n1", "n2"})) << "first appearance, no repeats";
}

TEST(HostlistTest, ErrorsSayWhatIsWrong) {
  EXPECT_EQ(ErrorOf(""), "nodelist: must not be empty");
  EXPECT_EQ(ErrorOf("n1,,n2"), "nodelist: an empty name in 'n1,,n2'");
  EXPECT_EQ(ErrorOf("gpu[01-04"), "nodelist: unclosed '[' in 'gpu[01-04'");
  EXPECT_EQ(ErrorOf("gpu]1"), "nodelist: unmatched ']' in 'gpu]1'");
  EXPECT_EQ(ErrorOf("n[]"), "nodelist: empty brackets '[]'");
  EXPECT_EQ(ErrorOf("n[4-1]"), "nodelist: range '4-1' runs backwards");
  EXPECT_EQ(ErrorOf("n[a-b]"), "nodelist: expected numbers or ranges like 01-04 inside '[a-b]'");
  EXPECT_EQ(ErrorOf("n 1"), "nodelist: names must not contain spaces or control characters");
  EXPECT_EQ(ErrorOf(std::string(65, 'x')),
            "nodelist: '" + std::string(64, 'x') + "...' is longer than 64 characters");
}

TEST(HostlistTest, ErrorsQuoteTheTextEscaped) {
  // The text is a user's bytes on their way to a terminal (the fuzzer found
  // a raw UTF-8 name in a message).
  EXPECT_EQ(ErrorOf("gpu[02-04,0\xd2\xa2"), "nodelist: unclosed '[' in 'gpu[02-04,0\\xd2\\xa2'");
  EXPECT_EQ(ErrorOf("n[\x01]"), "nodelist: expected numbers or ranges like 01-04 inside '[\\x01]'");
  EXPECT_EQ(ErrorOf("n1,,\x7f"), "nodelist: an empty name in 'n1,,\\x7f'");
  std::string escaped;  // 64 characters: 16 bytes written as \xNN
  for (int i = 0; i < 16; ++i) escaped += "\\xc3";
  EXPECT_EQ(ErrorOf(std::string(65, '\xc3')),
            "nodelist: '" + escaped + "...' is longer than 64 characters");
}

TEST(HostlistTest, HugeExpansionsAreRefusedBeforeBuildingThem) {
  EXPECT_EQ(ErrorOf("n[0-999999999]"), "nodelist: more than 100 names in 'n[0-999999999]'");
  EXPECT_EQ(ErrorOf("a[1-10]b[1-11]"), "nodelist: more than 100 names in 'a[1-10]b[1-11]'");
  EXPECT_EQ(ErrorOf("n[1-60],n[1-60]"), "nodelist: more than 100 names in 'n[1-60],n[1-60]'")
      << "repeats count: a long list of them costs work too";
  EXPECT_EQ(Expand("n[1-100]").size(), 100u);
}

}  // namespace
}  // namespace berth::server
