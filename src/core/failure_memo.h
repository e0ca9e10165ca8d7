// Remembers requests that failed to place on a capacity that has only shrunk
// since, so later jobs that ask for as much or more are skipped without
// searching. Placement is monotone: if a request does not fit, a request with
// at least as many tasks, GPUs, CPU and memory of the same kind and model
// does not fit either. Clear it whenever capacity is returned.
#pragma once

#include <vector>

#include "core/placer.h"

namespace berth::core {

class FailureMemo {
 public:
  bool KnownToFail(const PlacementRequest& request) const {
    for (const PlacementRequest& failed : failed_) {
      if (Dominates(request, failed)) return true;
    }
    return false;
  }
  void Record(const PlacementRequest& request) {
    if (!KnownToFail(request)) failed_.push_back(request);
  }
  void Clear() { failed_.clear(); }

 private:
  static bool Dominates(const PlacementRequest& bigger, const PlacementRequest& failed) {
    const TaskShape& b = bigger.shape;
    const TaskShape& f = failed.shape;
    const bool same_kind = b.wants_share() == f.wants_share() &&
                           (b.gpu.value() == 0) == (f.gpu.value() == 0);
    return same_kind && bigger.type == failed.type && bigger.tasks >= failed.tasks &&
           b.gpu >= f.gpu && b.cpu >= f.cpu && b.memory >= f.memory;
  }

  std::vector<PlacementRequest> failed_;
};

}  // namespace berth::core
