#include "sim/csv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace berth::sim {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> out;
  CsvLines lines(text);
  while (const std::optional<std::string_view> line = lines.Next()) out.emplace_back(*line);
  return out;
}

std::vector<std::string_view> RowOk(std::string_view line, size_t columns) {
  auto split = SplitCsvRow(line, columns);
  if (const BadRow* bad = std::get_if<BadRow>(&split)) {
    ADD_FAILURE() << "'" << line << "': " << bad->reason << ": " << bad->message;
    return {};
  }
  return std::get<std::vector<std::string_view>>(split);
}

BadRow RowBad(std::string_view line, size_t columns) {
  auto split = SplitCsvRow(line, columns);
  if (const BadRow* bad = std::get_if<BadRow>(&split)) return *bad;
  ADD_FAILURE() << "'" << line << "' split into a row";
  return {};
}

TEST(CsvLinesTest, LinesEndInLfOrCrlfAndAFinalNewlineStartsNoLine) {
  EXPECT_THAT(Lines("a,b\r\nc,d\ne\r\n"), ElementsAre("a,b", "c,d", "e"));
  EXPECT_THAT(Lines("a\nb"), ElementsAre("a", "b")) << "no final newline";
  EXPECT_THAT(Lines("a\n\n \nb\n"), ElementsAre("a", "", " ", "b")) << "blank lines are lines";
  EXPECT_THAT(Lines(""), ElementsAre());
  EXPECT_THAT(Lines("\n"), ElementsAre(""));
  // Only the "\r" of a "\r\n" goes: one elsewhere is part of the line.
  EXPECT_THAT(Lines("a\rb\r\r\n"), ElementsAre("a\rb\r"));
}

TEST(CsvLinesTest, NumbersAreFileLines) {
  CsvLines lines("h\r\n\r\nrow\n");
  ASSERT_EQ(lines.Next(), "h");
  EXPECT_EQ(lines.number(), 1);
  ASSERT_EQ(lines.Next(), "");
  ASSERT_EQ(lines.Next(), "row");
  EXPECT_EQ(lines.number(), 3);
  EXPECT_EQ(lines.Next(), std::nullopt);
}

TEST(CsvTest, AByteOrderMarkGoesOnlyAtTheStart) {
  EXPECT_EQ(StripUtf8Bom("\xEF\xBB\xBFjob_id,gpus"), "job_id,gpus");
  EXPECT_EQ(StripUtf8Bom("job_id,gpus"), "job_id,gpus");
  EXPECT_EQ(StripUtf8Bom("a\xEF\xBB\xBF"), "a\xEF\xBB\xBF");
}

TEST(CsvTest, FieldsSplitAtEveryCommaTrimmedOfSpacesAndTabs) {
  EXPECT_THAT(SplitCsvFields("a, b ,\tc\t"), ElementsAre("a", "b", "c"));
  EXPECT_THAT(SplitCsvFields("2017-10-01 12:00:00,x y"), ElementsAre("2017-10-01 12:00:00", "x y"))
      << "inner spaces stay";
  EXPECT_THAT(SplitCsvFields("solo"), ElementsAre("solo"));
}

TEST(CsvTest, EmptyFieldsAreEmpty) {
  EXPECT_THAT(SplitCsvFields(""), ElementsAre(""));
  EXPECT_THAT(SplitCsvFields(",,"), ElementsAre("", "", ""));
  EXPECT_THAT(SplitCsvFields("a,,c,"), ElementsAre("a", "", "c", ""));
  EXPECT_THAT(SplitCsvFields("a, \t ,c"), ElementsAre("a", "", "c"));
  EXPECT_THAT(RowOk("1,,", 3), ElementsAre("1", "", ""));
}

TEST(CsvTest, BlankLinesHoldOnlySpacesAndTabs) {
  EXPECT_TRUE(IsBlank(""));
  EXPECT_TRUE(IsBlank(" \t "));
  EXPECT_FALSE(IsBlank(","));
  EXPECT_FALSE(IsBlank(" x "));
}

// A header keeps a quoted name as written (it is then an unknown column);
// a data row with a double quote anywhere is not a row.
TEST(CsvTest, QuotedFieldsAreNotRows) {
  EXPECT_THAT(SplitCsvFields("\"gpus\",x"), ElementsAre("\"gpus\"", "x"));
  for (std::string_view line : {"\"a,b\",c", "a,\"\"", "a,b\"", "\""}) {
    const BadRow bad = RowBad(line, 2);
    EXPECT_EQ(bad.reason, "quoted field") << line;
    EXPECT_EQ(bad.message, "double quotes are not supported (fields split at every comma)");
  }
}

TEST(CsvTest, ARowNeedsItsColumnCount) {
  EXPECT_THAT(RowOk("a,b,c", 3), ElementsAre("a", "b", "c"));
  BadRow bad = RowBad("a,b", 3);
  EXPECT_EQ(bad.reason, "wrong column count");
  EXPECT_EQ(bad.message, "expected 3 fields, got 2");
  bad = RowBad("a,b,c,", 3);
  EXPECT_EQ(bad.message, "expected 3 fields, got 4") << "a trailing comma is one more field";
  // The quote is named first: a quoted comma would otherwise look like a
  // wrong count.
  EXPECT_EQ(RowBad("\"a,b\",c", 3).reason, "quoted field");
}

}  // namespace
}  // namespace berth::sim
