// The job submission parser: the body of `POST /api/v1/jobs` in, validated
// store::JobRequests out. Pure (no I/O, no clock), deterministic, and
// exception-free: nlohmann::json is used inside and its exceptions never
// leave.
//
// The body is one JSON object whose fields are, all optional except one of
// `command` / `script`:
//
//   name             string, 0..max_name_chars, no control characters
//   command          array of 1..max_command_args strings, the first non-empty
//   script           string, 1..max_script_bytes (exactly one of command/script)
//   tasks            integer 1..max_tasks                     (default 1)
//   gpus             integer 0..max_gpus_per_task, whole GPUs per task (default 1)
//   gpu_milli        integer 1..999, a share of one GPU (not with `gpus`)
//   gpu_type         string, 1..max_name_chars, no control characters: a
//                    model, or several separated by '|' (any one of them)
//   constraint       string, a node feature expression (core/constraint.h:
//                    "a100&ib", "h100|a100"); errors name the position
//   nodelist         a Slurm hostlist string ("gpu[01-04],gpu07") or an array
//                    of them: run only on these nodes (at most 4096 names)
//   exclude          the same: never on these nodes
//   gpus_in_one_group boolean: each task's GPUs inside one interconnect group
//                    of its node (an NVLink island), or the node is not used
//   distinct_nodes   boolean: each task on a node of its own
//   slurm_tasks_per_node array of `tasks` integers 1..max_tasks: a Slurm
//                    job (one task per node), the Slurm tasks on each node
//   cpus             number 0..max_cpus per task, exact to 0.001 (millicores)
//   memory_mib       integer 0..max_memory_mib per task
//   priority         integer -max_priority..max_priority, or "low" (-100),
//                    "normal" (0), "high" (100)
//   queue            string of [A-Za-z0-9._-], 1..64 characters
//   time_limit_s     number > 0, at most max_time_s, exact to the microsecond
//   estimate_s       as time_limit_s, and not over it
//   time_limit_signal {"name": "USR1" | "SIGUSR1" | "10", "before_s": 60,
//                    "batch_only": false}: Slurm's --signal=[B:]SIG[@secs],
//                    sent before_s before the time limit, once per run
//   preemptible      boolean
//   grace_s          number 0..max_grace_s                    (default 30)
//   depends_on       array of at most max_dependencies distinct entries, each a
//                    dependency string (ParseDependency) or a job id (afterok)
//   array            string, an array spec (ParseArraySpec)
//   env              object of at most max_env string -> string entries; keys
//                    match [A-Za-z_][A-Za-z0-9_]*, not BERTH_* nor
//                    CUDA_VISIBLE_DEVICES (the agent sets those)
//   workdir          string, an absolute path
//   retries          integer 0..max_retries
//   requeue          boolean: run again elsewhere if its node is lost (default true)
//   hold             boolean
//   wait_for_nodes   boolean: accept it even if no registered node could ever
//                    host it (the server refuses such a job otherwise)
//   idempotency_key  string of 1..128 visible ASCII characters
//   container        object: the image the tasks run in, its mounts within
//                    the operator's allow-list, workdir, env, entrypoint,
//                    mount_home and pull (container_request.h); with it, a
//                    `workdir` is mounted too and must be allowed as well
//
// A field whose value is null counts as absent. No string may contain NUL.
// A repeated key and nesting deeper than max_json_depth are errors. Decimal
// numbers are read from their text, never through a double.
//
// Every failure is InvalidArgument, and its message starts with what is wrong:
// a field (`tasks: must be 1..1024, got 0`), an element (`command[2]: ...`,
// `env.HOME: ...`, `depends_on[1]: ...`) or the body itself (`body: ...`);
// unknown fields read `unknown field 'x' (known: ...)`; malformed JSON reads
// `body: invalid JSON at byte N: ...` with N the 0-based offset of the byte
// where parsing failed (the body's length when it ended early). Fields are
// checked in the order of the table above and the first problem is reported,
// so the same body always gets the same message, whatever its key order.
// Values quoted in messages are cut to 64 characters with anything but
// printable ASCII escaped (\xNN), so a message is short and safe to put in a
// JSON response or on a terminal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "server/container_request.h"
#include "server/job_specs.h"
#include "store/records.h"

namespace berth::server {

// What the server accepts at most. The defaults suit a shared cluster; tests
// and the fuzzer may shrink them.
struct SubmissionLimits {
  size_t max_body_bytes = 1 << 20;
  size_t max_string = 4096;     // command arguments, env values, workdir
  size_t max_name_chars = 256;  // name and gpu_type
  size_t max_command_args = 1024;
  size_t max_env = 256;
  size_t max_script_bytes = 256 << 10;
  // JSON nesting; the schema needs 2 (the body, then command/env/depends_on).
  size_t max_json_depth = 8;
  int32_t max_tasks = 1024;
  int32_t max_gpus_per_task = 64;
  int64_t max_cpus = 1024;            // cores per task
  int64_t max_memory_mib = 16 << 20;  // 16 TiB per task
  int64_t max_time_s = 365 * 86400;   // time_limit_s and estimate_s
  int64_t max_grace_s = 3600;
  int32_t max_priority = 1000;
  int32_t max_retries = 100;
  int32_t max_array = kDefaultMaxArray;  // array indices are 0..max_array-1
  int32_t max_dependencies = 64;
  // An array of N indices becomes N JobRequests, each a copy of the request,
  // so N x body bytes is bounded too: a 1 MiB body times 10,000 indices would
  // otherwise ask for 10 GiB.
  size_t max_array_total_bytes = 64 << 20;
  // The host paths a container may mount (the server's
  // container_mount_allow); none by default.
  MountAllowList container_mounts;
};

struct Submission {
  std::vector<store::JobRequest> jobs;  // one per array index (array_index set), else one
  std::string idempotency_key;          // empty when not given
};

// Parses and validates a submission body. On success `jobs` is non-empty;
// for an array spec it holds one request per index in increasing index order.
Result<Submission> ParseSubmission(std::string_view json_body, const SubmissionLimits& limits = {});

}  // namespace berth::server
