// Remembers what did and did not fit a capacity during one pass, so the
// thousands of jobs behind a blocked head are mostly answered without a
// search. Placement is monotone: if a request does not fit, one asking for at
// least as many tasks, GPUs, CPU and memory of the same kind and model does
// not fit either; if it fits, one asking for at most as much fits too.
//
// Failures stay true while capacity only shrinks: clear them when capacity
// is returned (ClearFailures). Fits stay true only while capacity does not
// shrink: clear them on every allocation (ClearFits).
#pragma once

#include <vector>

#include "core/placer.h"

namespace berth::core {

class PlacementMemo {
 public:
  bool KnownToFail(const PlacementRequest& request) const {
    for (const PlacementRequest& failed : failed_) {
      if (AtLeast(request, failed)) return true;
    }
    return false;
  }
  bool KnownToFit(const PlacementRequest& request) const {
    for (const PlacementRequest& fit : fits_) {
      if (AtLeast(fit, request)) return true;
    }
    return false;
  }
  void RecordFailure(const PlacementRequest& request) {
    if (!KnownToFail(request)) failed_.push_back(request);
  }
  void RecordFit(const PlacementRequest& request) {
    if (!KnownToFit(request)) fits_.push_back(request);
  }
  void ClearFailures() { failed_.clear(); }
  void ClearFits() { fits_.clear(); }

 private:
  // Whether `a` asks for at least as much as `b`, of the same kind and model
  // (tasks that differ in shape compare only with their own job's).
  static bool AtLeast(const PlacementRequest& a, const PlacementRequest& b) {
    const TaskShape& x = a.shape;
    const TaskShape& y = b.shape;
    const bool same_kind =
        x.wants_share() == y.wants_share() && (x.gpu.value() == 0) == (y.gpu.value() == 0);
    return same_kind && a.type == b.type && a.eligibility == b.eligibility &&
           a.locality == b.locality && a.spread == b.spread && a.task_shapes == b.task_shapes &&
           a.tasks >= b.tasks && x.gpu >= y.gpu && x.cpu >= y.cpu && x.memory >= y.memory;
  }

  std::vector<PlacementRequest> failed_;
  std::vector<PlacementRequest> fits_;
};

}  // namespace berth::core
