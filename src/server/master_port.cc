#include "server/master_port.h"

#include "common/check.h"

namespace berth::server {

int32_t ChooseMasterPort(core::JobId job, int32_t attempt, const std::set<int32_t>& taken) {
  constexpr int64_t kRange = kEndMasterPort - kFirstMasterPort;
  BERTH_CHECK(static_cast<int64_t>(taken.size()) < kRange) << "every master port is taken";
  const int64_t preferred = (core::Value(job) * 31 + attempt) % kRange;
  for (int64_t step = 0; step < kRange; ++step) {
    const auto port = static_cast<int32_t>(kFirstMasterPort + (preferred + step) % kRange);
    if (!taken.contains(port)) return port;
  }
  BERTH_CHECK(false) << "unreachable: a free port was counted";
  return kFirstMasterPort;
}

}  // namespace berth::server
