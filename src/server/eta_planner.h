// EtaPlanner: runs the ETA plans of full passes (core::PlanEtas) on a thread
// of its own. Planning is most of a full pass on a long queue (about 0.3 s
// at 100k pending jobs); run in the cycle it would hold the controller's
// lock, and so every submit, heartbeat and event cycle, that long. Only the
// newest plan matters: one that arrives while another runs replaces any
// plan still waiting.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core/eta_plan.h"

namespace berth::server {

class EtaPlanner {
 public:
  // Called on the planner's thread with each plan's ETAs, how long the
  // plan took to make (`decided_in`, as submitted) and to run, and the time
  // it planned from (EtaPlan::now: when its ETAs were given).
  using Done = std::function<void(
      std::vector<core::PlannedEta> etas, std::chrono::steady_clock::duration decided_in,
      std::chrono::steady_clock::duration planned_in, core::Time planned_at)>;

  explicit EtaPlanner(Done done);
  // Finishes the plan in progress; drops one still waiting.
  ~EtaPlanner();
  EtaPlanner(const EtaPlanner&) = delete;
  EtaPlanner& operator=(const EtaPlanner&) = delete;

  void Submit(core::EtaPlan plan, std::chrono::steady_clock::duration decided_in);

 private:
  struct Job {
    core::EtaPlan plan;
    std::chrono::steady_clock::duration decided_in;
  };
  void Loop();

  Done done_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<Job> next_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace berth::server
