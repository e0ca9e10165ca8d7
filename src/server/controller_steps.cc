// Job steps (job_step.h): srun inside a running job. The controller keeps
// each step's layout and its tasks' exits; the nodes learn their step tasks
// from the desired state (the running task that hosts them carries them)
// and report their ends on heartbeats.
#include <algorithm>
#include <string>

#include "server/controller.h"

namespace berth::server {

using core::JobId;
using core::JobState;
using store::JobRecord;

namespace {

// A job's nodes in order, each with its first task (which hosts steps).
std::vector<StepHost> StepHosts(const JobRecord& job) {
  std::vector<StepHost> hosts;
  for (size_t task = 0; task < job.placement.size(); ++task) {
    const std::string& node = job.placement[task].node;
    const bool seen = std::any_of(hosts.begin(), hosts.end(),
                                  [&](const StepHost& host) { return host.node == node; });
    if (!seen) hosts.push_back(StepHost{node, static_cast<int32_t>(task)});
  }
  return hosts;
}

std::string StepName(JobId id, int32_t step) {
  return "step " + std::to_string(core::Value(id)) + "." + std::to_string(step);
}

}  // namespace

Result<JobStep> Controller::LaunchStep(const Principal& who, JobId id, StepRequest request) {
  std::lock_guard lock(mutex_);
  BERTH_ASSIGN_OR_RETURN(JobRecord * job, FindOwnLiveLocked(who, id));
  if (job->state != JobState::kRunning) {
    return FailedPrecondition("job " + std::to_string(core::Value(id)) + " is not running (state " +
                              std::string(core::JobStateName(job->state)) + "): no steps now");
  }
  if (job->request.container) {
    return FailedPrecondition("job " + std::to_string(core::Value(id)) +
                              " runs in a container: steps run on the host only");
  }
  // Steps of runs that ended are no longer asked about.
  for (auto it = steps_.begin(); it != steps_.end();) {
    auto live = jobs_.find(it->first);
    const bool current = live != jobs_.end() && !it->second.empty() &&
                         it->second.begin()->second.attempt == live->second.attempts;
    it = current ? std::next(it) : steps_.erase(it);
  }
  BERTH_ASSIGN_OR_RETURN(std::vector<StepTask> tasks, LayOutStep(StepHosts(*job), request));
  std::map<int32_t, JobStep>& steps = steps_[id];
  JobStep step;
  step.id = steps.empty() ? 0 : steps.rbegin()->first + 1;
  step.attempt = job->attempts;
  step.command = std::move(request.command);
  step.env = std::move(request.env);
  for (const StepTask& task : tasks) {
    if (step.nodes.empty() || step.nodes.back() != task.node) step.nodes.push_back(task.node);
  }
  step.tasks = std::move(tasks);
  steps[step.id] = step;
  WakeAgentsLocked(*job);
  return step;
}

Result<JobStep*> Controller::FindStepLocked(const Principal& who, JobId id, int32_t step) {
  auto steps = steps_.find(id);
  auto found = steps == steps_.end() ? nullptr : &steps->second;
  auto it = found == nullptr ? decltype(steps->second.end()){} : found->find(step);
  if (found == nullptr || it == found->end()) {
    // Say first whether the job is the caller's at all.
    BERTH_RETURN_IF_ERROR(FindOwnLiveLocked(who, id).status());
    return NotFound(StepName(id, step) + " does not exist");
  }
  auto live = jobs_.find(id);
  if (live != jobs_.end()) {
    BERTH_RETURN_IF_ERROR(CheckOwnerLocked(who, live->second));
  } else {
    Result<JobRecord> stored = store_.GetJob(id);
    if (!stored.ok()) return NotFound("job " + std::to_string(core::Value(id)) + " does not exist");
    BERTH_RETURN_IF_ERROR(CheckOwnerLocked(who, *stored));
  }
  return &it->second;
}

Result<JobStep> Controller::GetStep(const Principal& who, JobId id, int32_t step) {
  std::lock_guard lock(mutex_);
  BERTH_ASSIGN_OR_RETURN(JobStep * found, FindStepLocked(who, id, step));
  JobStep view = *found;
  // A step of a run that ended has nothing left running: its tasks that
  // never reported ended with the run.
  auto live = jobs_.find(id);
  const bool run_over = live == jobs_.end() || live->second.attempts != view.attempt ||
                        live->second.state == JobState::kCompleting;
  if (run_over) {
    for (StepTask& task : view.tasks) {
      if (!task.ended()) task.signal = 9;
    }
  }
  return view;
}

Result<JobStep> Controller::CancelStep(const Principal& who, JobId id, int32_t step) {
  std::lock_guard lock(mutex_);
  BERTH_ASSIGN_OR_RETURN(JobStep * found, FindStepLocked(who, id, step));
  if (!found->cancelled && StepStateName(*found) == "running") {
    found->cancelled = true;
    if (auto live = jobs_.find(id); live != jobs_.end()) WakeAgentsLocked(live->second);
  }
  return *found;
}

std::vector<protocol::StepLaunch> Controller::StepLaunchesLocked(const JobRecord& job,
                                                                 int32_t task) const {
  std::vector<protocol::StepLaunch> launches;
  auto steps = steps_.find(job.id);
  if (steps == steps_.end() || job.state != JobState::kRunning) return launches;
  for (const auto& [id, step] : steps->second) {
    if (step.attempt != job.attempts) continue;
    for (const StepTask& step_task : step.tasks) {
      if (step_task.job_task != task || step_task.ended()) continue;
      launches.push_back(StepLaunchFor(job.id, step, step_task));
    }
  }
  return launches;
}

void Controller::ProcessStepReportsLocked(const std::string& node,
                                          const std::vector<protocol::StepTaskReport>& reports) {
  for (const protocol::StepTaskReport& report : reports) {
    auto steps = steps_.find(report.job);
    if (steps == steps_.end()) continue;
    auto step = steps->second.find(report.step);
    if (step == steps->second.end() || step->second.attempt != report.attempt) continue;
    std::vector<StepTask>& tasks = step->second.tasks;
    if (report.rank < 0 || static_cast<size_t>(report.rank) >= tasks.size()) continue;
    StepTask& task = tasks[static_cast<size_t>(report.rank)];
    if (task.node != node || task.job_task != report.task || task.ended()) continue;
    task.exit_code = report.exit_code;
    task.signal = report.signal;
  }
}

}  // namespace berth::server
