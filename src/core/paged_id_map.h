// PagedIdMap: a map from JobId to T for ids that come in runs, as ids grow
// with submission. Values live in pages of 4,096 consecutive ids, so a walk
// over live jobs in id order touches memory in order, and a lookup is a
// shift, a small hash lookup (none when the page is the last one used) and
// an index: several times faster than an unordered_map of 100k entries,
// whose every lookup misses the cache.
#pragma once

#include <array>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>

#include "core/ids.h"

namespace berth::core {

template <typename T>
class PagedIdMap {
 public:
  // The value for `id`, value-initialized on first use.
  T& operator[](JobId id) {
    const int64_t value = Value(id);
    Page& page = PageOf(value >> kPageBits);
    const size_t slot = static_cast<size_t>(value & kSlotMask);
    if (!page.used[slot]) {
      page.used[slot] = true;
      ++page.count;
      ++size_;
    }
    return page.values[slot];
  }

  // The value for `id`, or null if it has none.
  const T* find(JobId id) const {
    const int64_t value = Value(id);
    auto it = pages_.find(value >> kPageBits);
    if (it == pages_.end()) return nullptr;
    const size_t slot = static_cast<size_t>(value & kSlotMask);
    return it->second->used[slot] ? &it->second->values[slot] : nullptr;
  }

  T* find(JobId id) { return const_cast<T*>(std::as_const(*this).find(id)); }

  void erase(JobId id) {
    const int64_t value = Value(id);
    auto it = pages_.find(value >> kPageBits);
    if (it == pages_.end()) return;
    Page& page = *it->second;
    const size_t slot = static_cast<size_t>(value & kSlotMask);
    if (!page.used[slot]) return;
    page.used[slot] = false;
    page.values[slot] = T{};
    --size_;
    if (--page.count == 0) {
      if (last_ == &page) last_ = nullptr;
      pages_.erase(it);
    }
  }

  void clear() {
    pages_.clear();
    last_ = nullptr;
    size_ = 0;
  }

  size_t size() const { return size_; }

 private:
  static constexpr int kPageBits = 12;
  static constexpr int64_t kSlotMask = (int64_t{1} << kPageBits) - 1;
  struct Page {
    std::array<T, size_t{1} << kPageBits> values{};
    std::bitset<size_t{1} << kPageBits> used;
    size_t count = 0;
  };

  Page& PageOf(int64_t key) {
    if (last_ != nullptr && last_key_ == key) return *last_;
    std::unique_ptr<Page>& page = pages_[key];
    if (!page) page = std::make_unique<Page>();
    last_key_ = key;
    last_ = page.get();
    return *page;
  }

  std::unordered_map<int64_t, std::unique_ptr<Page>> pages_;
  int64_t last_key_ = 0;
  Page* last_ = nullptr;
  size_t size_ = 0;
};

}  // namespace berth::core
