// Jobs as the core sees them: what was asked (JobSpec) and where the job
// stands (Job). Everything about how the job was submitted, its command,
// environment and logs belongs to the server, not here.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/job_state.h"
#include "core/placement.h"
#include "core/resources.h"
#include "core/time.h"

namespace berth::core {

// Where a job may run, beyond its GPU model: Slurm's --constraint,
// --nodelist and --exclude. Names are node names as registered.
struct NodeConstraints {
  std::string features;               // a FeatureExpression (constraint.h); empty: any
  std::vector<std::string> nodelist;  // only these nodes; empty: any node
  std::vector<std::string> exclude;   // never these nodes
  // The job runs in a container image: only nodes that run containers.
  bool container = false;

  bool empty() const {
    return features.empty() && nodelist.empty() && exclude.empty() && !container;
  }
  auto operator<=>(const NodeConstraints&) const = default;
};

// Where a task's GPUs may sit on its node. Placement keeps a task inside one
// interconnect group whenever one has room; kOneGroup makes that a rule
// (tensor parallelism across an NVLink island wants it).
enum class GpuLocality : uint8_t { kAny, kOneGroup };

// How a gang's tasks may share nodes. kDistinctNodes puts each task on a
// node of its own: a Slurm job is a gang of one task per node (each the
// node's share), and `--nodes 2` means two nodes even when both shares
// would fit one.
enum class NodeSpread : uint8_t { kAny, kDistinctNodes };

// An element of a job array that runs at most `max_running` elements at once
// (Slurm's `--array=0-9%2`; array_throttle.h).
struct ArrayLimit {
  JobId array{};  // the array's id: its first element's job id
  int32_t max_running = 1;
  auto operator<=>(const ArrayLimit&) const = default;
};

struct JobSpec {
  JobId id{};
  std::string user;
  std::string queue;  // team / virtual cluster
  std::string name;   // what the user called it; runs of one name predict each other
  // Priority class: higher classes are ordered first by policies that honour
  // classes and may preempt lower ones.
  int32_t priority = 0;
  // A job of several tasks is a gang: all tasks start together or none does.
  int32_t tasks = 1;
  TaskShape task;  // per task; with `task_shapes`, the largest of them
  // Set when the tasks' shapes differ: one per task, and the tasks go on
  // distinct nodes (node_spread is kDistinctNodes).
  TaskShapes task_shapes;
  // The GPU models it accepts (any one of them; a gang still gets one
  // model for all its tasks); empty: any model.
  std::vector<std::string> gpu_types;
  // Null: none. Shared and immutable, so that the many jobs without any
  // carry a pointer rather than three empty containers.
  std::shared_ptr<const NodeConstraints> constraints;
  GpuLocality gpu_locality = GpuLocality::kAny;
  NodeSpread node_spread = NodeSpread::kAny;
  std::optional<ArrayLimit> array_limit;  // none: not a throttled array element
  std::optional<Duration> time_limit;     // hard limit; the job is stopped there
  std::optional<Duration> estimate;       // the user's own runtime estimate
  bool preemptible = false;
  // The job saves a checkpoint every this much run time (checkpoint.h);
  // unset: only when it reports one.
  std::optional<Duration> checkpoint_interval;
  // The job saves its work when it is asked to stop (within its grace), so
  // a preemption loses nothing: the simulator's assumption without a
  // checkpoint interval, as the reference simulators'. Nothing live sets it.
  bool saves_when_stopped = false;
  Duration grace;  // time between SIGTERM and SIGKILL when stopped
  Time submit_time;

  const TaskShape& ShapeOf(size_t rank) const { return task_shapes ? (*task_shapes)[rank] : task; }
  MilliGpu total_gpu() const {
    if (!task_shapes) return task.gpu * tasks;
    MilliGpu total;
    for (const TaskShape& shape : *task_shapes) total += shape.gpu;
    return total;
  }
  // GPUs as a whole number for reports (shares count as their thousandths).
  double gpus() const { return static_cast<double>(total_gpu().value()) / 1000.0; }
};

// Scratch space for the policy's runtime estimator, kept inside the job: a
// cycle estimates every running job (the reservation's schedule of ends),
// and a cache of its own, indexed by job id, cost a miss in memory the job
// does not share, which was most of an event cycle at 31k running jobs
// (RuntimePredictor keeps here which of its history windows answer the
// job). A cache, not state: any estimator may overwrite it, and an empty
// one changes no answer.
struct EstimatorMemo {
  // The estimator that wrote it: a weak reference to a token of its own,
  // which also keeps the token's address from going to a later estimator.
  std::weak_ptr<const void> owner;
  int64_t generation = -1;  // the owner's own stamp, when written
  std::array<const void*, 8> refs{};
};

struct Job {
  JobSpec spec;
  // Inside the core: kPending, kHeld, kRunning, or kCompleting (asked to
  // stop, still holding its GPUs).
  JobState state = JobState::kPending;
  Placement placement;  // set while running
  Time started;         // start of the current run
  Duration executed;    // run time of earlier runs
  int32_t preemptions = 0;
  // When the running job last saved a checkpoint, if it tells us: a
  // preemption then loses only the work since.
  std::optional<Time> last_checkpoint;
  // The gap between its last two reported checkpoints of this run: when it
  // will likely save next (checkpoint.h).
  std::optional<Duration> checkpoint_period;
  // The current run started under a starvation guarantee (a policy's
  // promise that no newcomer will stop it); cleared when the run ends.
  bool guaranteed = false;
  // The time the job last entered the queue (submit, or its last preemption).
  Time queued_since;
  mutable EstimatorMemo estimator_memo;

  // Holding its placement: running, or stopping within its grace period.
  bool running() const { return state == JobState::kRunning || state == JobState::kCompleting; }
  bool stopping() const { return state == JobState::kCompleting; }
  // Total run time so far, including the current run.
  Duration RunTime(Time now) const { return running() ? executed + (now - started) : executed; }
  // Attained service in GPU-seconds (Tiresias' 2D "GPU time"), exact to the
  // microsecond: run time x GPUs.
  double AttainedGpuSeconds(Time now) const {
    return RunTime(now).seconds() * static_cast<double>(spec.total_gpu().value()) / 1000.0;
  }
};

}  // namespace berth::core
