#include "core/paged_id_map.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace berth::core {
namespace {

TEST(PagedIdMapTest, KeepsValuesByIdAcrossPagesAndFreesEmptyPages) {
  PagedIdMap<int> map;
  map[JobId{1}] = 10;
  map[JobId{4095}] = 20;
  map[JobId{4096}] = 30;  // the next page
  map[JobId{-5}] = 40;    // ids below zero have pages too
  EXPECT_EQ(map.size(), 4u);
  EXPECT_EQ(map[JobId{1}], 10);
  EXPECT_EQ(map[JobId{4095}], 20);
  EXPECT_EQ(map[JobId{4096}], 30);
  EXPECT_EQ(map[JobId{-5}], 40);
  ASSERT_NE(map.find(JobId{4095}), nullptr);
  EXPECT_EQ(*map.find(JobId{4095}), 20);
  EXPECT_EQ(map.find(JobId{4094}), nullptr);  // a page that exists, a slot that does not
  EXPECT_EQ(map.find(JobId{99999}), nullptr);

  map.erase(JobId{4096});
  map.erase(JobId{4096});  // erasing twice is harmless
  EXPECT_EQ(map.size(), 3u);
  EXPECT_EQ(map[JobId{4096}], 0);  // a fresh value after its page was freed
  EXPECT_EQ(map.size(), 4u);
  map.clear();
  EXPECT_EQ(map.size(), 0u);
  EXPECT_EQ(map[JobId{1}], 0);
}

TEST(PagedIdMapTest, AgreesWithAStdMapUnderRandomUse) {
  PagedIdMap<int64_t> map;
  std::map<int64_t, int64_t> model;
  std::mt19937 rng(7);
  for (int step = 0; step < 20'000; ++step) {
    const auto id = static_cast<int64_t>(rng() % 20'000) - 1'000;
    if (rng() % 3 == 0) {
      map.erase(JobId{id});
      model.erase(id);
    } else {
      map[JobId{id}] += step;
      model[id] += step;
    }
    ASSERT_EQ(map.size(), model.size());
  }
  for (int64_t id = -1'000; id < 19'000; ++id) {
    const int64_t* found = map.find(JobId{id});
    auto it = model.find(id);
    ASSERT_EQ(found != nullptr, it != model.end()) << id;
    if (found != nullptr) {
      EXPECT_EQ(*found, it->second) << id;
    }
  }
}

}  // namespace
}  // namespace berth::core
