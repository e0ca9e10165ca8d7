#include "server/eta_planner.h"

#include <utility>

namespace berth::server {

EtaPlanner::EtaPlanner(Done done) : done_(std::move(done)), thread_([this] { Loop(); }) {}

EtaPlanner::~EtaPlanner() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void EtaPlanner::Submit(core::EtaPlan plan, std::chrono::steady_clock::duration decided_in) {
  {
    std::lock_guard lock(mutex_);
    next_.emplace(Job{std::move(plan), decided_in});
  }
  wake_.notify_one();
}

void EtaPlanner::Loop() {
  while (true) {
    std::optional<Job> job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || next_.has_value(); });
      if (stopping_) return;
      job = std::exchange(next_, std::nullopt);
    }
    const auto start = std::chrono::steady_clock::now();
    const core::Time planned_at = job->plan.now;
    std::vector<core::PlannedEta> etas = core::PlanEtas(job->plan);
    done_(std::move(etas), job->decided_in, std::chrono::steady_clock::now() - start, planned_at);
  }
}

}  // namespace berth::server
