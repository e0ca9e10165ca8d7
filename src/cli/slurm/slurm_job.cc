#include "cli/slurm/slurm_job.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "cli/table.h"

namespace berth::cli::slurm {

using nlohmann::json;

SlurmState MapState(const std::string& state, const std::string& reason) {
  if (state == "pending" || state == "held") return {"PENDING", "PD"};
  // Slurm shows a job whose nodes are being set up as running (CONFIGURING
  // is for nodes that boot); Berth's agent is starting its tasks.
  if (state == "starting" || state == "running") return {"RUNNING", "R"};
  // scontrol requeue stopping its run: Slurm's REQUEUED until it is pending.
  if (state == "completing" && reason == "requeued") return {"REQUEUED", "RQ"};
  if (state == "completing") return {"COMPLETING", "CG"};
  if (state == "succeeded") return {"COMPLETED", "CD"};
  if (state == "cancelled") return {"CANCELLED", "CA"};
  if (state == "preempted") return {"PREEMPTED", "PR"};
  // A TIMEOUT state of Berth's own (issue 29, item 5), or a failure whose
  // record says the limit ended it.
  if (state == "timeout" || (state == "failed" && reason == "time_limit")) {
    return {"TIMEOUT", "TO"};
  }
  if (state == "failed" && reason == "out_of_memory") return {"OUT_OF_MEMORY", "OOM"};
  if (state == "failed" && reason == "node_lost") return {"NODE_FAIL", "NF"};
  if (state == "failed") return {"FAILED", "F"};
  // Its node vanished: the server requeues it (Slurm's REQUEUED, shown
  // while a job goes back to pending) unless it asked not to be.
  if (state == "lost") return {"REQUEUED", "RQ"};
  return {"?", "?"};
}

std::string MapReason(const std::string& state, const std::string& reason,
                      const std::string& message, const std::optional<int64_t>& signal) {
  if (state == "pending" || state == "held") {
    if (reason == "dependency") return "Dependency";
    if (reason == "held") return "JobHeldUser";
    if (reason == "priority") return "Priority";
    // Backfilling it would delay the job holding the reservation: Slurm's
    // backfill leaves such a job at Priority.
    if (reason == "reservation") return "Priority";
    if (reason == "resources" || reason == "fragmentation" || reason == "reserved") {
      return "Resources";
    }
    if (reason == "nodes_unavailable") return "ReqNodeNotAvail";
    // A queue at its ceiling is a group limit on GPUs; a per-user limit is
    // on running jobs or on GPUs, as the message says
    // (server/explain_text.cc: "user limit: 2 jobs running of 2 allowed").
    if (reason == "quota") return "QOSGrpGRES";
    if (reason == "user_limit") {
      const bool jobs = message.find(" job running") != std::string::npos ||
                        message.find(" jobs running") != std::string::npos;
      return jobs ? "QOSMaxJobsPerUserLimit" : "QOSMaxGRESPerUser";
    }
    if (reason == "array_limit") return "JobArrayTaskLimit";
    if (reason == "infeasible") return "BadConstraints";
    return "None";
  }
  if (reason == "time_limit" || state == "timeout") return "TimeLimit";
  if (reason == "out_of_memory") return "OutOfMemory";
  if (reason == "node_lost") return "NodeDown";
  if (reason == "start_failed") return "JobLaunchFailure";
  if (reason == "dependency_never_satisfied") return "DependencyNeverSatisfied";
  if (state == "failed") {
    // A batch script killed by a signal is a launch failure to Slurm 22.05
    // (tests/data/slurm/golden/states.txt: `kill -9 $$` gives FAILED,
    // JobLaunchFailure, ExitCode=0:9).
    return signal ? "JobLaunchFailure" : "NonZeroExitCode";
  }
  return "None";
}

namespace {

// Durations come as seconds with a fraction (time_limit_s: 600.0): whole
// seconds are what Slurm prints.
std::optional<int64_t> OptionalInt(const json& job, const char* key) {
  const auto it = job.find(key);
  if (it == job.end() || !it->is_number()) return std::nullopt;
  if (it->is_number_float()) return std::llround(it->get<double>());
  return it->get<int64_t>();
}

std::string ExitCode(const json& job, const SlurmState& state) {
  const std::optional<int64_t> code = OptionalInt(job, "exit_code");
  const std::optional<int64_t> signal = OptionalInt(job, "signal");
  if (signal) return "0:" + std::to_string(*signal);
  // Slurm reports an OOM kill as 0:125 whatever the task's status was.
  if (state.name == "OUT_OF_MEMORY") return "0:125";
  return std::to_string(code.value_or(0)) + ":0";
}

}  // namespace

int64_t SlurmJob::NodeCount() const {
  return nodes.empty() ? 1 : static_cast<int64_t>(nodes.size());
}

int64_t SlurmJob::ElapsedSeconds(core::Time now) const {
  if (!start_time) return 0;
  const core::Time until = end_time.value_or(now);
  return std::max<int64_t>(0, (until.micros() - start_time->micros()) / 1'000'000);
}

SlurmJob SlurmJobFromJson(const json& job, const std::string& default_partition) {
  SlurmJob out;
  out.id = job.value("id", int64_t{0});
  out.array_parent = OptionalInt(job, "array_parent");
  out.array_index = OptionalInt(job, "array_index");
  out.array_max_running = OptionalInt(job, "array_max_running");
  out.array_id = out.array_index ? std::to_string(out.array_parent.value_or(out.id)) + "_" +
                                       std::to_string(*out.array_index)
                                 : std::to_string(out.id);
  out.name = job.value("name", "");
  out.user = job.value("user", "");
  out.partition = job.value("queue", "");
  if (out.partition.empty()) out.partition = default_partition;
  const std::string state = job.value("state", "");
  const std::string reason = job.value("reason", "");
  const SlurmState mapped = MapState(state, reason);
  out.state = mapped.name;
  out.state_compact = mapped.compact;
  out.reason = MapReason(state, reason, job.value("message", ""), OptionalInt(job, "signal"));
  out.exit_code = ExitCode(job, mapped);
  out.tasks = job.value("tasks", int64_t{1});
  out.gpus_per_task = job.value("gpu_milli", int64_t{0}) / 1000;
  const int64_t cpu_milli = job.value("cpu_milli", int64_t{0});
  out.cpus = out.tasks * std::max<int64_t>(1, (cpu_milli + 999) / 1000);
  out.memory_mib = job.value("memory_mib", int64_t{0});
  out.total_gpus = out.gpus_per_task * out.tasks;
  out.total_memory_mib = out.memory_mib * out.tasks;
  if (const auto it = job.find("task_shapes"); it != job.end() && it->is_array()) {
    out.cpus = out.total_gpus = out.total_memory_mib = 0;
    for (const json& shape : *it) {
      const SlurmJob::TaskShare share{
          shape.value("gpus", int64_t{0}),
          std::max<int64_t>(1, (shape.value("cpu_milli", int64_t{0}) + 999) / 1000),
          shape.value("memory_mib", int64_t{0})};
      out.task_shares.push_back(share);
      out.cpus += share.cpus;
      out.total_gpus += share.gpus;
      out.total_memory_mib += share.memory_mib;
    }
  }
  out.priority = job.value("priority", int64_t{0});
  std::vector<std::pair<std::string, int64_t>> gpus_by_node;
  if (const auto it = job.find("placement"); it != job.end() && it->is_array()) {
    for (const json& task : *it) {
      const std::string node = task.value("node", "");
      const int64_t gpus = task.contains("gpus") && task["gpus"].is_array()
                               ? static_cast<int64_t>(task["gpus"].size())
                               : 0;
      auto found = std::find_if(gpus_by_node.begin(), gpus_by_node.end(),
                                [&](const auto& entry) { return entry.first == node; });
      if (found == gpus_by_node.end()) {
        gpus_by_node.emplace_back(node, gpus);
        out.tasks_on_node.push_back(1);
      } else {
        found->second += gpus;
        ++out.tasks_on_node[static_cast<size_t>(found - gpus_by_node.begin())];
      }
    }
  }
  for (const auto& [node, gpus] : gpus_by_node) {
    out.nodes.push_back(node);
    out.gpus_on_busiest_node = std::max(out.gpus_on_busiest_node, gpus);
  }
  if (gpus_by_node.empty()) out.gpus_on_busiest_node = out.gpus_per_task * out.tasks;
  out.submit_time = JsonTime(job.value("submit_time", json())).value_or(core::Time());
  out.start_time = JsonTime(job.value("start_time", json()));
  out.end_time = JsonTime(job.value("end_time", json()));
  out.eta = JsonTime(job.value("eta", json()));
  out.time_limit_s = OptionalInt(job, "time_limit_s");
  out.restarts = std::max<int64_t>(0, job.value("attempts", int64_t{0}) - 1);
  out.requeue = job.value("requeue", true);
  out.batch = job.value("batch", false);
  out.workdir = job.value("workdir", "");
  if (const auto it = job.find("command"); it != job.end() && it->is_array() && !it->empty()) {
    out.command = (*it)[0].is_string() ? (*it)[0].get<std::string>() : "";
  }
  return out;
}

namespace {

// 0,1,2,3,5 -> "0-3,5".
std::string IndexRanges(std::vector<int64_t> indices) {
  std::sort(indices.begin(), indices.end());
  std::string out;
  for (size_t i = 0; i < indices.size();) {
    size_t last = i;
    while (last + 1 < indices.size() && indices[last + 1] <= indices[last] + 1) ++last;
    if (!out.empty()) out += ",";
    out += std::to_string(indices[i]);
    if (indices[last] != indices[i]) out += "-" + std::to_string(indices[last]);
    i = last + 1;
  }
  return out;
}

}  // namespace

std::vector<SlurmJob> FoldPendingArrayElements(std::vector<SlurmJob> jobs) {
  std::vector<SlurmJob> out;
  std::map<int64_t, size_t> row_of_array;  // array -> its folded row in `out`
  std::map<int64_t, std::vector<int64_t>> indices;
  for (SlurmJob& job : jobs) {
    if (!job.IsPending() || !job.array_index) {
      out.push_back(std::move(job));
      continue;
    }
    const int64_t array = job.array_parent.value_or(job.id);
    indices[array].push_back(*job.array_index);
    const auto [row, first] = row_of_array.emplace(array, out.size());
    if (first) {
      out.push_back(std::move(job));
    } else {
      out[row->second].id = std::min(out[row->second].id, job.id);
    }
  }
  for (const auto& [array, row] : row_of_array) {
    SlurmJob& folded = out[row];
    folded.array_tasks = IndexRanges(indices[array]);
    if (folded.array_max_running) {
      folded.array_tasks += "%" + std::to_string(*folded.array_max_running);
    }
    folded.array_id = std::to_string(array) + "_[" + folded.array_tasks + "]";
  }
  return out;
}

}  // namespace berth::cli::slurm
