#include "server/silence_watch.h"

#include <algorithm>

namespace berth::server {

void SilenceWatch::Heard(core::NodeId node, core::Time at) {
  if (!order_.empty()) at = std::max(at, order_.back().heard);
  auto it = where_.find(node);
  if (it == where_.end()) {
    where_.emplace(node, order_.insert(order_.end(), Entry{node, at}));
    return;
  }
  it->second->heard = at;
  order_.splice(order_.end(), order_, it->second);  // iterators stay valid
}

std::vector<std::pair<core::NodeId, core::Time>> SilenceWatch::SilentBefore(
    core::Time cutoff) const {
  std::vector<std::pair<core::NodeId, core::Time>> silent;
  for (auto it = order_.begin(); it != order_.end() && it->heard < cutoff; ++it) {
    silent.emplace_back(it->node, it->heard);
  }
  return silent;
}

void SilenceWatch::Forget(core::NodeId node) {
  auto it = where_.find(node);
  if (it == where_.end()) return;
  order_.erase(it->second);
  where_.erase(it);
}

}  // namespace berth::server
