// Job steps: `srun` inside a running job (a batch script, a salloc shell)
// runs a command as a step of the job, one process per step task, on the
// job's nodes. The server lays the step's tasks out over the nodes (Slurm's
// block distribution), gives each its Slurm variables, and each node runs
// its step tasks inside the job's task that holds its share of the node
// (protocol::StepLaunch), so they run as the user, in that cgroup, with its
// GPUs. Steps are stored with their job's record: a restarted server still
// serves them, and its nodes still learn the ones to run.
//
// Pure: layout, environment and JSON; the controller keeps the steps
// (controller_steps.cc).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "core/ids.h"
#include "protocol/desired_state.h"
#include "store/records.h"

namespace berth::server {

// What a client asks for (POST /api/v1/jobs/{id}/steps).
struct StepRequest {
  std::vector<std::string> command;
  std::map<std::string, std::string> env;  // over each task's environment
  std::optional<int32_t> ntasks;           // none: one per node used
  std::optional<int32_t> nodes;            // none: as many as the tasks need, at most all
  std::optional<int32_t> ntasks_per_node;
};

// One node of a job as steps see it: its name and the job's task there
// that hosts step tasks (the first task of the job on that node).
struct StepHost {
  std::string node;
  int32_t job_task = 0;
};

// A step and its tasks are stored with their job (store::JobRecord::steps).
using StepTask = store::StepTaskRecord;
using JobStep = store::StepRecord;

// A step as its readers see it: a step of a run that ended (the job's, or
// an earlier run of it) has nothing left running, so its tasks that never
// reported ended with the run (SIGKILL), and so did it.
JobStep StepAsSeen(const store::JobRecord& job, JobStep step);

// "running", "completed" (every task exited 0), "failed" or "cancelled".
std::string StepStateName(const JobStep& step);
// The highest exit code of its tasks (a signal counts as 128 + it), as
// srun exits with; none while a task runs.
std::optional<int32_t> StepExitCode(const JobStep& step);

// The request, strictly: InvalidArgument naming the field.
Result<StepRequest> ParseStepRequest(const nlohmann::json& body);

// Lays `request` out over `hosts` as Slurm's block distribution does: the
// first nodes take one more task when the tasks do not divide evenly.
// InvalidArgument naming the field when the job cannot hold the step.
Result<std::vector<StepTask>> LayOutStep(const std::vector<StepHost>& hosts,
                                         const StepRequest& request);

// The step task's own variables, over its task's environment: Slurm's
// (SLURM_PROCID, SLURM_STEP_ID, ...) and torch's (RANK, WORLD_SIZE, ...).
std::map<std::string, std::string> StepTaskEnvironment(core::JobId job, const JobStep& step,
                                                       const StepTask& task);

protocol::StepLaunch StepLaunchFor(core::JobId job, const JobStep& step, const StepTask& task);

nlohmann::json StepJson(core::JobId job, const JobStep& step);

}  // namespace berth::server
