#include "cli/slurm/scontrol_job.h"

#include <algorithm>
#include <vector>

#include "cli/slurm/slurm_text.h"

namespace berth::cli::slurm {
namespace {

std::string TimeOrUnknown(const std::optional<core::Time>& time) {
  return time ? SlurmTime(*time) : "Unknown";
}

std::string Tres(const SlurmJob& job) {
  std::string tres = "cpu=" + std::to_string(job.cpus);
  if (job.total_memory_mib > 0) tres += ",mem=" + SlurmMemory(job.total_memory_mib);
  tres += ",node=" + std::to_string(job.NodeCount()) + ",billing=" + std::to_string(job.cpus);
  if (job.total_gpus > 0) tres += ",gres/gpu=" + std::to_string(job.total_gpus);
  return tres;
}

}  // namespace

std::string ScontrolJob(const SlurmJob& job, core::Time now, const std::string& uid, Lines lines) {
  const std::string user = job.user + "(" + (uid.empty() ? "4294967294" : uid) + ")";
  std::optional<core::Time> end = job.end_time;
  if (!end && job.start_time && job.time_limit_s) {
    end = *job.start_time + core::Duration::Seconds(*job.time_limit_s);
  }
  // An array's element: its array and index; the row of its waiting
  // elements (FoldPendingArrayElements): their indices and the %N.
  std::vector<std::string> first = {"JobId=" + std::to_string(job.id)};
  if (job.array_index) {
    first.push_back("ArrayJobId=" + std::to_string(job.array_parent.value_or(job.id)));
    first.push_back("ArrayTaskId=" +
                    (job.array_tasks.empty() ? std::to_string(*job.array_index) : job.array_tasks));
    if (!job.array_tasks.empty() && job.array_max_running) {
      first.push_back("ArrayTaskThrottle=" + std::to_string(*job.array_max_running));
    }
  }
  first.push_back("JobName=" + job.name);
  const std::vector<std::vector<std::string>> groups = {
      first,
      {"UserId=" + user, "GroupId=(null)", "MCS_label=N/A"},
      {"Priority=" + std::to_string(job.priority), "Nice=0", "Account=(null)", "QOS=(null)"},
      {"JobState=" + job.state, "Reason=" + job.reason, "Dependency=(null)"},
      {"Requeue=" + std::string(job.requeue ? "1" : "0"),
       "Restarts=" + std::to_string(job.restarts), "BatchFlag=1", "Reboot=0",
       "ExitCode=" + job.exit_code},
      {"RunTime=" + SlurmElapsed(job.ElapsedSeconds(now)),
       "TimeLimit=" + (job.time_limit_s ? SlurmElapsed(*job.time_limit_s) : "UNLIMITED"),
       "TimeMin=N/A"},
      {"SubmitTime=" + SlurmTime(job.submit_time), "EligibleTime=" + SlurmTime(job.submit_time)},
      {"StartTime=" + TimeOrUnknown(job.IsPending() ? job.eta : job.start_time),
       "EndTime=" + TimeOrUnknown(end), "Deadline=N/A"},
      {"Partition=" + job.partition},
      {"NodeList=" + (job.nodes.empty() ? "(null)" : CompressHostlist(job.nodes))},
      {"NumNodes=" + std::to_string(job.NodeCount()), "NumCPUs=" + std::to_string(job.cpus),
       "NumTasks=" + std::to_string(job.tasks),
       "CPUs/Task=" +
           std::to_string(std::max<int64_t>(1, job.cpus / std::max<int64_t>(1, job.tasks)))},
      {"TRES=" + Tres(job)},
      {"MinMemoryNode=" + SlurmMemory(job.memory_mib)},
      {"Command=" + (job.command.empty() ? "(null)" : job.command)},
      {"WorkDir=" + (job.workdir.empty() ? "(null)" : job.workdir)},
  };
  std::string out;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (g > 0) out += lines == Lines::kOne ? " " : "\n   ";
    for (size_t i = 0; i < groups[g].size(); ++i) out += (i > 0 ? " " : "") + groups[g][i];
  }
  return out + "\n";
}

}  // namespace berth::cli::slurm
