// The sentence a person reads for a pending job: the core's reason code
// plus the numbers of the moment (what it asks for, who blocks it, when it
// should start). `berth why`, the API's `message` and the dashboard show it.
#pragma once

#include <string>

#include "core/decision.h"
#include "store/records.h"

namespace berth::server {

std::string DescribePending(const core::PendingJob& pending, const store::JobRecord& job);

}  // namespace berth::server
