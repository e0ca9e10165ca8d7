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

std::vector<std::pair<core::NodeId, core::Time>> SilenceWatch::TakeSilentBefore(core::Time cutoff) {
  std::vector<std::pair<core::NodeId, core::Time>> silent;
  while (!order_.empty() && order_.front().heard < cutoff) {
    silent.emplace_back(order_.front().node, order_.front().heard);
    where_.erase(order_.front().node);
    order_.pop_front();
  }
  return silent;
}

}  // namespace berth::server
