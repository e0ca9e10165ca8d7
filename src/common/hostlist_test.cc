#include "common/hostlist.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace berth {
namespace {

TEST(CompressHostlist, ConsecutiveNumbersBecomeOneRange) {
  EXPECT_EQ(CompressHostlist({"sim1", "sim2"}), "sim[1-2]");
  EXPECT_EQ(CompressHostlist({"sim1", "sim2", "sim3", "sim4"}), "sim[1-4]");
}

TEST(CompressHostlist, ALoneNameHasNoBracket) {
  EXPECT_EQ(CompressHostlist({"sim1"}), "sim1");
  EXPECT_EQ(CompressHostlist({"gpu-a"}), "gpu-a");
  EXPECT_EQ(CompressHostlist({}), "");
}

TEST(CompressHostlist, GapsShareTheBracketOfTheirPrefix) {
  EXPECT_EQ(CompressHostlist({"sim1", "sim2", "sim4", "gpu-a"}), "sim[1-2,4],gpu-a");
  EXPECT_EQ(CompressHostlist({"sim1", "sim3"}), "sim[1,3]");
}

TEST(CompressHostlist, ZeroPaddingIsKept) {
  EXPECT_EQ(CompressHostlist({"n01", "n02", "n03"}), "n[01-03]");
  EXPECT_EQ(CompressHostlist({"n09", "n10"}), "n[09-10]");
  EXPECT_EQ(CompressHostlist({"n9", "n10"}), "n[9-10]");
  // 010 is not 10 written with the width of 09's range: a range of its own.
  EXPECT_EQ(CompressHostlist({"n09", "n010"}), "n[09,010]");
}

TEST(CompressHostlist, DifferentPrefixesStayApartAndOrderIsKept) {
  EXPECT_EQ(CompressHostlist({"a1", "b1", "a2"}), "a1,b1,a2");
  EXPECT_EQ(CompressHostlist({"sim2", "sim1"}), "sim[2,1]");
  EXPECT_EQ(CompressHostlist({"rack1-node1", "rack1-node2"}), "rack1-node[1-2]");
}

TEST(CompressHostlist, NamesWithoutNumbersAreNeverBracketed) {
  EXPECT_EQ(CompressHostlist({"alpha", "beta"}), "alpha,beta");
  EXPECT_EQ(CompressHostlist({"host.example.com", "sim1"}), "host.example.com,sim1");
}

TEST(TasksPerNodeString, RunsOfEqualCountsAreCounted) {
  EXPECT_EQ(TasksPerNodeString({2, 2}), "2(x2)");
  EXPECT_EQ(TasksPerNodeString({2, 2, 1}), "2(x2),1");
  EXPECT_EQ(TasksPerNodeString({4}), "4");
  EXPECT_EQ(TasksPerNodeString({1, 2, 3}), "1,2,3");
  EXPECT_EQ(TasksPerNodeString({}), "");
}

}  // namespace
}  // namespace berth
