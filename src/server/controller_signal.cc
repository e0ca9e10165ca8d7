// Signals sent to a running job's tasks (scancel --signal): stored with the
// job before they are acknowledged, kept until its run ends, and sent with
// its tasks on every heartbeat answer; the nodes deliver each id once
// (agent/task_runner.h).
#include <algorithm>
#include <string>

#include "server/controller.h"
#include "server/event_log.h"
#include "server/job_messages.h"

namespace berth::server {

using core::JobId;
using core::JobState;
using store::JobRecord;

namespace {

// The signals kept per run: enough for any script's handshakes; the oldest
// go first (their nodes have long delivered them).
constexpr size_t kSignalsKept = 16;

}  // namespace

Status Controller::Signal(const Principal& who, JobId id, const std::string& signal,
                          bool batch_only) {
  std::lock_guard lock(mutex_);
  BERTH_ASSIGN_OR_RETURN(JobRecord * found, FindOwnLiveLocked(who, id));
  JobRecord& job = *found;
  if (job.state != JobState::kRunning) {
    return NotRunning(id, job.state, "only a running job's tasks can be signalled");
  }
  last_signal_id_ = std::max(last_signal_id_ + 1, Now().micros());
  const std::vector<store::SignalRecord> before = job.signals;
  job.signals.push_back(store::SignalRecord{last_signal_id_, signal, batch_only});
  if (job.signals.size() > kSignalsKept) job.signals.erase(job.signals.begin());
  // Accepted means stored: a restart right after still delivers it.
  if (Status stored = PersistLocked({&job}); !stored.ok()) {
    job.signals = before;
    return stored;
  }
  LogEvent("job_signalled", {{"job", std::to_string(core::Value(id))},
                             {"signal", signal},
                             {"batch_only", batch_only ? "true" : "false"},
                             {"by", who.user}});
  WakeAgentsLocked(job);
  return Status::Ok();
}

}  // namespace berth::server
