// SilenceWatch: which nodes have not been heard from for too long, found
// without walking every node.
//
// The controller marks a node down once its agent has been silent for the
// heartbeat timeout. Walking all nodes for that took 10-40 ms at 10,000
// nodes (a cold record per node, under the controller's lock, in the
// scheduler loop once a second: docs/performance.md). Here the watched nodes
// stay in the order they were last heard from, since a heartbeat moves its
// node to the back: the silent ones are a prefix, and a check reads only
// them and the first that is not.
//
// A node is watched from its first heartbeat (or registration, or reload)
// until it is forgotten (reported down); a node that is down is not watched
// until it is heard again. Not thread-safe (the controller's lock guards it).
#pragma once

#include <list>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/ids.h"
#include "core/time.h"

namespace berth::server {

class SilenceWatch {
 public:
  // `node` was heard from at `at`. Times should not go back; one that does
  // (a clock stepped back) counts as the latest time heard, so the order
  // holds and the node is only ever reported later, not sooner.
  void Heard(core::NodeId node, core::Time at);
  // Nodes last heard before `cutoff`, the longest silent first, with when
  // each was last heard.
  std::vector<std::pair<core::NodeId, core::Time>> SilentBefore(core::Time cutoff) const;
  // Stops watching `node` (reported down) until it is heard again.
  void Forget(core::NodeId node);

  size_t watched() const { return order_.size(); }

 private:
  struct Entry {
    core::NodeId node;
    core::Time heard;
  };
  std::list<Entry> order_;  // by `heard`, oldest first
  std::unordered_map<core::NodeId, std::list<Entry>::iterator> where_;
};

}  // namespace berth::server
