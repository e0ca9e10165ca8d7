// The JSON of a TaskLaunch. Its fields sit flat in a run entry of the
// desired state (beside job, task, gpus...), as they did before TaskLaunch
// existed, so older agents read what they know:
//
//   "name", "command", "script", "env", "workdir", "output", "error",
//   "open_mode" ("append" | "truncate"), "array_job", "array_index" (null:
//   not in an array), "time_limit_s" (null: none), "grace_s", "run_as": {"user"}, "limits":
//   {"cpu_milli", "memory_mib"}, "container": null | {"image", "mounts": [{"source", "target",
//   "read_only"}], "workdir", "env", "entrypoint"}, "signal": {"name", "before_s",
//   "batch_only"} (absent: none; written only when set, so older agents
//   read the entries of jobs without one)
//
// Durations are seconds (a JSON number), read to the microsecond.
#pragma once

#include <nlohmann/json.hpp>

#include "common/json_fields.h"
#include "common/status.h"
#include "protocol/task_launch.h"

namespace berth::protocol {

// Adds the launch's fields to `entry` (a run entry being written).
void AddTaskLaunchJson(const TaskLaunch& launch, nlohmann::json& entry);

// Reads the launch's fields of the run entry `entry` reads; the caller
// reads the rest and calls entry.Finish().
Result<TaskLaunch> ParseTaskLaunch(JsonFields& entry);

// {"name": "USR1" | "SIGUSR1" | "10", "before_s": 60, "batch_only": false}
// (the API's job field `signal` too): the name made canonical; before_s
// defaults to 60 as Slurm's. Errors name the field under `path`.
Result<EarlySignal> ParseEarlySignal(const nlohmann::json& body, const std::string& path);

}  // namespace berth::protocol
