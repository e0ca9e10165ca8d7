// A set of live jobs kept as a vector sorted by id: what ClusterState hands
// to Decide as "pending" and "running". Decide walks these sets on every
// cycle, and a contiguous vector walks far faster than a tree; inserts are
// mostly appends because ids grow with submission.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "common/check.h"
#include "core/ids.h"

namespace berth::core {

struct Job;

class JobIndex {
 public:
  using Entry = std::pair<JobId, Job*>;

  void Insert(JobId id, Job* job) {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), id, ByIdLess);
    BERTH_CHECK(it == entries_.end() || it->first != id) << "job " << Value(id) << " indexed twice";
    entries_.insert(it, Entry{id, job});
  }
  void Erase(JobId id) {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), id, ByIdLess);
    BERTH_CHECK(it != entries_.end() && it->first == id) << "job " << Value(id) << " not indexed";
    entries_.erase(it);
  }

  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

 private:
  static bool ByIdLess(const Entry& entry, JobId id) { return entry.first < id; }
  std::vector<Entry> entries_;
};

}  // namespace berth::core
