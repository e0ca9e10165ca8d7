// Job steps (job_step.h): srun inside a running job. The controller keeps
// each step's layout and its tasks' exits; the nodes learn their step tasks
// from the desired state (the running task that hosts them carries them)
// and report their ends on heartbeats.
#include <algorithm>
#include <optional>
#include <string>

#include "server/controller.h"
#include "server/job_messages.h"

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
    return NotRunning(id, job->state, "no steps now");
  }
  if (job->request.container) {
    return FailedPrecondition(JobName(id) + " runs in a container: steps run on the host only");
  }
  BERTH_ASSIGN_OR_RETURN(std::vector<StepTask> tasks, LayOutStep(StepHosts(*job), request));
  JobStep step;
  step.id = job->steps.empty() ? 0 : job->steps.back().id + 1;
  step.attempt = job->attempts;
  step.command = std::move(request.command);
  step.env = std::move(request.env);
  for (const StepTask& task : tasks) {
    if (step.nodes.empty() || step.nodes.back() != task.node) step.nodes.push_back(task.node);
  }
  step.tasks = std::move(tasks);
  step.start_time = Now();
  // Stored before it is answered or run: an accepted step outlives a restart.
  job->steps.push_back(step);
  if (Status stored = PersistLocked({job}); !stored.ok()) {
    job->steps.pop_back();
    return stored;
  }
  WakeAgentsLocked(*job);
  return step;
}

Result<JobStep*> Controller::FindStepLocked(const Principal& who, JobRecord& job, int32_t step) {
  BERTH_RETURN_IF_ERROR(CheckOwnerLocked(who, job));
  for (JobStep& found : job.steps) {
    if (found.id == step) return &found;
  }
  return NotFound(StepName(job.id, step) + " does not exist");
}

Result<std::vector<JobStep>> Controller::ViewStepsLocked(const Principal& who, JobId id,
                                                         std::optional<int32_t> step) {
  auto live = jobs_.find(id);
  std::optional<JobRecord> stored;
  if (live == jobs_.end()) {
    Result<JobRecord> read = store_.GetJob(id);
    if (!read.ok()) return NotFound(JobName(id) + " does not exist");
    stored = std::move(*read);
  }
  JobRecord& job = live != jobs_.end() ? live->second : *stored;
  std::vector<JobStep> views;
  if (step) {
    BERTH_ASSIGN_OR_RETURN(JobStep * found, FindStepLocked(who, job, *step));
    views.push_back(*found);
  } else {
    BERTH_RETURN_IF_ERROR(CheckOwnerLocked(who, job));
    views = job.steps;
  }
  for (JobStep& view : views) view = StepAsSeen(job, std::move(view));
  return views;
}

Result<JobStep> Controller::ViewStepLocked(const Principal& who, JobId id, int32_t step) {
  BERTH_ASSIGN_OR_RETURN(std::vector<JobStep> views, ViewStepsLocked(who, id, step));
  return views.front();
}

Result<std::vector<JobStep>> Controller::ListSteps(const Principal& who, JobId id) {
  std::lock_guard lock(mutex_);
  return ViewStepsLocked(who, id, std::nullopt);
}

Result<JobStep> Controller::GetStep(const Principal& who, JobId id, int32_t step) {
  std::lock_guard lock(mutex_);
  return ViewStepLocked(who, id, step);
}

Result<JobStep> Controller::CancelStep(const Principal& who, JobId id, int32_t step) {
  std::lock_guard lock(mutex_);
  // A job no longer live has no step left to cancel: the view says how each ended.
  if (auto live = jobs_.find(id); live != jobs_.end()) {
    JobRecord& job = live->second;
    BERTH_ASSIGN_OR_RETURN(JobStep * found, FindStepLocked(who, job, step));
    if (!found->cancelled && found->attempt == job.attempts && StepStateName(*found) == "running") {
      found->cancelled = true;
      if (Status stored = PersistLocked({&job}); !stored.ok()) {
        found->cancelled = false;
        return stored;
      }
      WakeAgentsLocked(job);
    }
  }
  return ViewStepLocked(who, id, step);
}

std::vector<protocol::StepLaunch> Controller::StepLaunchesLocked(const JobRecord& job,
                                                                 int32_t task) const {
  std::vector<protocol::StepLaunch> launches;
  if (job.state != JobState::kRunning) return launches;
  for (const JobStep& step : job.steps) {
    if (step.attempt != job.attempts) continue;
    for (const StepTask& step_task : step.tasks) {
      if (step_task.job_task != task || step_task.ended()) continue;
      launches.push_back(StepLaunchFor(job.id, step, step_task));
    }
  }
  return launches;
}

void Controller::ProcessStepReportsLocked(const std::string& node,
                                          const std::vector<protocol::StepTaskReport>& reports,
                                          std::vector<JobRecord*>& changed) {
  for (const protocol::StepTaskReport& report : reports) {
    auto live = jobs_.find(report.job);
    if (live == jobs_.end()) continue;
    JobRecord& job = live->second;
    auto step = std::find_if(job.steps.begin(), job.steps.end(),
                             [&](const JobStep& s) { return s.id == report.step; });
    if (step == job.steps.end() || step->attempt != report.attempt) continue;
    std::vector<StepTask>& tasks = step->tasks;
    if (report.rank < 0 || static_cast<size_t>(report.rank) >= tasks.size()) continue;
    StepTask& task = tasks[static_cast<size_t>(report.rank)];
    if (task.node != node || task.job_task != report.task || task.ended()) continue;
    task.exit_code = report.exit_code;
    task.signal = report.signal;
    // Its last task's end is the step's.
    if (std::all_of(tasks.begin(), tasks.end(), [](const StepTask& t) { return t.ended(); })) {
      step->end_time = Now();
    }
    changed.push_back(&job);
  }
}

}  // namespace berth::server
