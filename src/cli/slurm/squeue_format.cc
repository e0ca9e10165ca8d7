#include "cli/slurm/squeue_format.h"

#include <strings.h>

#include <functional>

namespace berth::cli::slurm {
namespace {

using Getter = std::function<std::string(const SlurmJob&, core::Time)>;

struct FieldDef {
  char letter;       // 0: only by name (-O)
  const char* name;  // -O's name
  const char* header;
  Cut cut;  // node lists are never cut
  Getter value;
};

std::string TimeOrNa(const std::optional<core::Time>& time) {
  return time ? SlurmTime(*time) : "N/A";
}

std::string TimeLimit(const SlurmJob& job) {
  return job.time_limit_s ? SlurmDuration(*job.time_limit_s) : "UNLIMITED";
}

// squeue's START_TIME: a running or ended job's start, a pending job's
// expected start (Berth's ETA; Slurm's backfill estimate), else N/A.
std::string StartTime(const SlurmJob& job) {
  if (job.IsPending()) return TimeOrNa(job.eta);
  return TimeOrNa(job.start_time);
}

// squeue's END_TIME: when it ended, or when its limit ends it; NONE for
// a running job without a limit.
std::string EndTime(const SlurmJob& job) {
  if (job.end_time) return SlurmTime(*job.end_time);
  const std::optional<core::Time> start = job.IsPending() ? job.eta : job.start_time;
  if (!job.time_limit_s) return job.IsRunning() ? "NONE" : "N/A";
  if (!start) return "N/A";
  return SlurmTime(*start + core::Duration::Seconds(*job.time_limit_s));
}

std::string Nodes(const SlurmJob& job) { return CompressHostlist(job.nodes); }

// Pending, and failed, timed-out or OOM jobs show "(Reason)"; others their nodes.
std::string ReasonList(const SlurmJob& job) {
  if (job.IsPending() || job.state == "FAILED" || job.state == "TIMEOUT" ||
      job.state == "OUT_OF_MEMORY") {
    return "(" + job.reason + ")";
  }
  return Nodes(job);
}

std::string TresPerNode(const SlurmJob& job) {
  return job.gpus_on_busiest_node > 0 ? "gres:gpu:" + std::to_string(job.gpus_on_busiest_node)
                                      : "N/A";
}

std::string TimeLeft(const SlurmJob& job, core::Time now) {
  if (!job.time_limit_s) return "UNLIMITED";
  return SlurmDuration(*job.time_limit_s - job.ElapsedSeconds(now));
}

const std::vector<FieldDef>& Fields() {
  static const std::vector<FieldDef> fields = {
      {'i', "JobArrayId", "JOBID", Cut::kYes, [](auto& j, auto) { return j.array_id; }},
      {'A', "JobId", "JOBID", Cut::kYes, [](auto& j, auto) { return std::to_string(j.id); }},
      {'F', "ArrayJobId", "ARRAY_JOB_ID", Cut::kYes,
       [](auto& j, auto) { return std::to_string(j.array_parent.value_or(j.id)); }},
      {'K', "ArrayTaskId", "ARRAY_TASK_ID", Cut::kYes,
       [](auto& j, auto) {
         if (!j.array_tasks.empty()) return j.array_tasks;  // a row of waiting elements
         return j.array_index ? std::to_string(*j.array_index) : std::string("N/A");
       }},
      {'j', "Name", "NAME", Cut::kYes, [](auto& j, auto) { return j.name; }},
      {'u', "UserName", "USER", Cut::kYes, [](auto& j, auto) { return j.user; }},
      {'t', "StateCompact", "ST", Cut::kYes, [](auto& j, auto) { return j.state_compact; }},
      {'T', "State", "STATE", Cut::kYes, [](auto& j, auto) { return j.state; }},
      {'M', "TimeUsed", "TIME", Cut::kNo,
       [](auto& j, core::Time now) { return SlurmDuration(j.ElapsedSeconds(now)); }},
      {'l', "TimeLimit", "TIME_LIMIT", Cut::kYes, [](auto& j, auto) { return TimeLimit(j); }},
      {'L', "TimeLeft", "TIME_LEFT", Cut::kYes,
       [](auto& j, core::Time now) { return TimeLeft(j, now); }},
      {'D', "NumNodes", "NODES", Cut::kYes,
       [](auto& j, auto) { return std::to_string(j.NodeCount()); }},
      {'R', "ReasonList", "NODELIST(REASON)", Cut::kNo,
       [](auto& j, auto) { return ReasonList(j); }},
      {'P', "Partition", "PARTITION", Cut::kYes, [](auto& j, auto) { return j.partition; }},
      {'C', "NumCPUs", "CPUS", Cut::kYes, [](auto& j, auto) { return std::to_string(j.cpus); }},
      {0, "NumTasks", "TASKS", Cut::kYes, [](auto& j, auto) { return std::to_string(j.tasks); }},
      {'b', "tres-per-node", "TRES_PER_NODE", Cut::kYes,
       [](auto& j, auto) { return TresPerNode(j); }},
      {0, "tres-per-task", "TRES_PER_TASK", Cut::kYes,
       [](auto& j, auto) {
         return j.gpus_per_task > 0 ? "gres:gpu:" + std::to_string(j.gpus_per_task)
                                    : std::string("N/A");
       }},
      {'S', "StartTime", "START_TIME", Cut::kYes, [](auto& j, auto) { return StartTime(j); }},
      {'V', "SubmitTime", "SUBMIT_TIME", Cut::kYes,
       [](auto& j, auto) { return SlurmTime(j.submit_time); }},
      {'e', "EndTime", "END_TIME", Cut::kYes, [](auto& j, auto) { return EndTime(j); }},
      {'r', "Reason", "REASON", Cut::kYes, [](auto& j, auto) { return j.reason; }},
      {'Q', "PriorityLong", "PRIORITY", Cut::kYes,
       [](auto& j, auto) { return std::to_string(j.priority); }},
      {'p', "Priority", "PRIORITY", Cut::kYes,
       [](auto& j, auto) { return std::to_string(j.priority); }},
      // Berth has no accounts, QOS or scheduled nodes: Slurm's unset values.
      {'a', "Account", "ACCOUNT", Cut::kYes, [](auto&, auto) { return std::string("(null)"); }},
      {'q', "QOS", "QOS", Cut::kYes, [](auto&, auto) { return std::string("(null)"); }},
      {'Y', "SchedNodes", "SCHEDNODES", Cut::kNo,
       [](auto&, auto) { return std::string("(null)"); }},
      {'N', "NodeList", "NODELIST", Cut::kNo, [](auto& j, auto) { return Nodes(j); }},
      {'m', "MinMemory", "MIN_MEMORY", Cut::kYes,
       [](auto& j, auto) { return SlurmMemory(j.memory_mib); }},
      {0, "RestartCnt", "RESTARTS", Cut::kYes,
       [](auto& j, auto) { return std::to_string(j.restarts); }},
      {'Z', "WorkDir", "WORK_DIR", Cut::kNo, [](auto& j, auto) { return j.workdir; }},
      {'o', "Command", "COMMAND", Cut::kNo, [](auto& j, auto) { return j.command; }},
      {0, "exit_code", "EXIT_CODE", Cut::kYes, [](auto& j, auto) { return j.exit_code; }},
  };
  return fields;
}

int ByLetter(char letter) {
  const auto& fields = Fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].letter == letter) return static_cast<int>(i);
  }
  return -1;
}

int ByName(const std::string& name) {
  const auto& fields = Fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    if (strcasecmp(fields[i].name, name.c_str()) == 0) return static_cast<int>(i);
  }
  return -1;
}

std::string Render(const SqueueFormat& format, const std::function<std::string(int, Cut)>& text) {
  std::string line = format.prefix;
  for (const SqueueField& field : format.fields) {
    if (field.index >= 0) {
      const Cut cut = Fields()[static_cast<size_t>(field.index)].cut;
      line += PadField(text(field.index, cut), field.width, field.justify, cut);
    }
    line += field.suffix;
  }
  return line + "\n";
}

}  // namespace

ParsedFormat ParseSqueueFormat(const std::string& format) {
  return ParsePercentFormat(format, ByLetter);
}

ParsedFormat ParseSqueueLongFormat(const std::string& format) {
  ParsedFormat parsed;
  size_t start = 0;
  while (start <= format.size()) {
    size_t end = format.find(',', start);
    if (end == std::string::npos) end = format.size();
    std::string token = format.substr(start, end - start);
    start = end + 1;
    if (token.empty()) {
      if (end == format.size()) break;
      continue;
    }
    SqueueField field;
    field.width = 20;
    if (const size_t colon = token.find(':'); colon != std::string::npos) {
      size_t i = colon + 1;
      if (i < token.size() && token[i] == '.') {
        field.justify = Justify::kRight;
        ++i;
      }
      field.width = 0;
      while (i < token.size() && token[i] >= '0' && token[i] <= '9') {
        field.width = field.width * 10 + (token[i++] - '0');
      }
      field.suffix = token.substr(i);
      token.resize(colon);
    }
    field.index = ByName(token);
    if (field.index < 0) parsed.unknown.push_back(token);
    parsed.format.fields.push_back(std::move(field));
  }
  return parsed;
}

std::string SqueueHeader(const SqueueFormat& format) {
  return Render(format, [](int index, Cut) { return Fields()[static_cast<size_t>(index)].header; });
}

std::string SqueueLine(const SqueueFormat& format, const SlurmJob& job, core::Time now) {
  return Render(
      format, [&](int index, Cut) { return Fields()[static_cast<size_t>(index)].value(job, now); });
}

}  // namespace berth::cli::slurm
