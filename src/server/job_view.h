// A job as the API's readers see it: its record, and for a pending job the
// last cycle's reason instead of its record's.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "core/job_state.h"
#include "core/node_filters.h"
#include "core/reason.h"
#include "store/records.h"

namespace berth::server {

// A pending job's reason is the last cycle's (core::ReasonCode: resources,
// priority...) rather than its record's sub-state (core::JobReason), and
// its record's message is the sentence for it; neither is ever stored.
struct JobView {
  store::JobRecord record;
  std::optional<core::ReasonCode> waiting;  // a pending job's, from the last cycle
  // A pending job that does not fit now (resources, fragmentation,
  // nodes_unavailable) or ever (infeasible), read alone: what the node
  // pipeline says of every node now (its message says it in words).
  // Listings leave it out: it costs a pass over the nodes.
  std::shared_ptr<const core::NodeTally> nodes;
  // The API's "reason": `waiting`'s name, else the record's.
  std::string_view reason() const {
    return waiting ? core::ReasonName(*waiting) : core::JobReasonName(record.reason);
  }
};

}  // namespace berth::server
