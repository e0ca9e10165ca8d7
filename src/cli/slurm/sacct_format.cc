#include "cli/slurm/sacct_format.h"

#include <strings.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string_view>

#include "cli/slurm/slurm_text.h"
#include "cli/table.h"

namespace berth::cli::slurm {
namespace {

struct Context {
  core::Time now;
  const std::string& canceller_uid;
};

using StepValue = std::function<std::string(const SlurmJob&, const SacctStep&, core::Time)>;

struct FieldDef {
  int width;  // Slurm's default; negative: left-justified
  const char* name;
  std::function<std::string(const SlurmJob&, const Context&)> value;
  // On a step's row; none: empty, as Slurm leaves the job's own fields.
  StepValue step = nullptr;
};

std::string DateOrUnknown(const std::optional<core::Time>& time) {
  return time ? SlurmTime(*time) : "Unknown";
}

// A job that ended without starting (cancelled while pending) started
// "None"; one still waiting, "Unknown" (golden/sacct.txt).
std::string Start(const SlurmJob& job) {
  if (job.start_time) return SlurmTime(*job.start_time);
  return job.end_time ? "None" : "Unknown";
}

// The job's exit code as Slurm's accounting keeps it: a job cancelled or
// timed out is recorded when its state changes, before its script's
// signal comes back, so its row says 0:0 (golden/sacct.txt; the signal is
// on its .batch step's row, and in scontrol's ExitCode).
std::string ExitCode(const SlurmJob& job) {
  if (job.state == "CANCELLED" || job.state == "TIMEOUT") return "0:0";
  return job.exit_code;
}

// sacct's AllocTRES: what a started job holds, names in Slurm's order.
std::string AllocTres(const SlurmJob& job) {
  if (!job.start_time) return "";
  std::string tres = "billing=" + std::to_string(job.cpus) + ",cpu=" + std::to_string(job.cpus);
  if (job.total_gpus > 0) tres += ",gres/gpu=" + std::to_string(job.total_gpus);
  if (job.total_memory_mib > 0) tres += ",mem=" + SlurmMemory(job.total_memory_mib);
  return tres + ",node=" + std::to_string(job.NodeCount());
}

// A step's allocation: sacct's AllocTRES of a step row (no billing).
std::string StepTres(const SacctStep& step) {
  std::string tres = "cpu=" + std::to_string(step.cpus);
  if (step.gpus > 0) tres += ",gres/gpu=" + std::to_string(step.gpus);
  if (step.memory_mib > 0) tres += ",mem=" + SlurmMemory(step.memory_mib);
  return tres + ",node=" + std::to_string(step.nodes.size());
}

// What `job` holds on `nodes` (its tasks there, each a task's share; a
// job of tasks of their own shares has one task on each of its nodes).
void ShareOn(const SlurmJob& job, SacctStep& step) {
  const int64_t cpus_per_task = job.cpus / std::max<int64_t>(1, job.tasks);
  step.cpus = step.gpus = step.memory_mib = 0;
  for (const std::string& node : step.nodes) {
    const auto at = std::find(job.nodes.begin(), job.nodes.end(), node);
    const auto index = static_cast<size_t>(at - job.nodes.begin());
    if (index < job.task_shares.size()) {
      step.cpus += job.task_shares[index].cpus;
      step.gpus += job.task_shares[index].gpus;
      step.memory_mib += job.task_shares[index].memory_mib;
      continue;
    }
    const int64_t tasks = index < job.tasks_on_node.size() ? job.tasks_on_node[index] : 1;
    step.cpus += cpus_per_task * tasks;
    step.gpus += job.gpus_per_task * tasks;
    step.memory_mib += job.memory_mib * tasks;
  }
}

int64_t StepElapsed(const SacctStep& step, core::Time now) {
  if (!step.start_time) return 0;
  const core::Time until = step.end_time.value_or(now);
  return std::max<int64_t>(0, (until.micros() - step.start_time->micros()) / 1'000'000);
}

std::string State(const SlurmJob& job, const Context& context) {
  if (job.state == "CANCELLED" && !context.canceller_uid.empty()) {
    return "CANCELLED by " + context.canceller_uid;
  }
  return job.state;
}

const std::vector<FieldDef>& Fields() {
  static const std::vector<FieldDef> fields = {
      {-12, "JobID", [](auto& j, auto&) { return j.array_id; },
       [](auto& j, auto& s, auto) { return j.array_id + "." + s.suffix; }},
      {-12, "JobIDRaw", [](auto& j, auto&) { return std::to_string(j.id); },
       [](auto& j, auto& s, auto) { return std::to_string(j.id) + "." + s.suffix; }},
      {10, "JobName", [](auto& j, auto&) { return j.name; },
       [](auto&, auto& s, auto) { return s.name; }},
      {10, "State", State, [](auto&, auto& s, auto) { return s.state; }},
      {8, "ExitCode", [](auto& j, auto&) { return ExitCode(j); },
       [](auto&, auto& s, auto) { return s.exit_code; }},
      {10, "Elapsed",
       [](auto& j, const Context& c) { return SlurmElapsed(j.ElapsedSeconds(c.now)); },
       [](auto&, auto& s, core::Time now) { return SlurmElapsed(StepElapsed(s, now)); }},
      {10, "ElapsedRaw",
       [](auto& j, const Context& c) { return std::to_string(j.ElapsedSeconds(c.now)); },
       [](auto&, auto& s, core::Time now) { return std::to_string(StepElapsed(s, now)); }},
      {19, "Submit", [](auto& j, auto&) { return SlurmTime(j.submit_time); },
       [](auto& j, auto&, auto) { return SlurmTime(j.submit_time); }},
      {19, "Start", [](auto& j, auto&) { return Start(j); },
       [](auto&, auto& s, auto) { return DateOrUnknown(s.start_time); }},
      {19, "End", [](auto& j, auto&) { return DateOrUnknown(j.end_time); },
       [](auto&, auto& s, auto) { return DateOrUnknown(s.end_time); }},
      {10, "AllocTRES", [](auto& j, auto&) { return AllocTres(j); },
       [](auto&, auto& s, auto) { return StepTres(s); }},
      {15, "NodeList",
       [](auto& j, auto&) {
         return j.nodes.empty() ? std::string("None assigned") : CompressHostlist(j.nodes);
       },
       [](auto&, auto& s, auto) { return CompressHostlist(s.nodes); }},
      // A queue is Berth's account, as sacctmgr shows a user's (sacctmgr_format.h).
      {10, "Account", [](auto& j, auto&) { return j.partition; },
       [](auto& j, auto&, auto) { return j.partition; }},
      {10, "Partition", [](auto& j, auto&) { return j.partition; }},
      // What it holds, or would: Slurm shows a pending job's CPUs too.
      {10, "AllocCPUS", [](auto& j, auto&) { return std::to_string(j.cpus); },
       [](auto&, auto& s, auto) { return std::to_string(s.cpus); }},
      {8, "NNodes", [](auto& j, auto&) { return std::to_string(j.NodeCount()); },
       [](auto&, auto& s, auto) { return std::to_string(s.nodes.size()); }},
      {8, "NTasks", [](auto& j, auto&) { return std::to_string(j.tasks); },
       [](auto&, auto& s, auto) { return std::to_string(s.tasks); }},
      {9, "User", [](auto& j, auto&) { return j.user; }},
      {10, "Timelimit",
       [](auto& j, auto&) {
         return j.time_limit_s ? SlurmElapsed(*j.time_limit_s) : std::string("UNLIMITED");
       }},
      {22, "Reason", [](auto& j, auto&) { return j.reason; }},
      {10, "Priority", [](auto& j, auto&) { return std::to_string(j.priority); }},
      {10, "WorkDir", [](auto& j, auto&) { return j.workdir; }},
  };
  return fields;
}

// Values cut to their width end in '+'; headers are cut plainly.
enum class Mark { kNo, kYes };

std::string Cell(const std::string& value, int width, Mark mark) {
  const size_t size = static_cast<size_t>(std::abs(width));
  std::string text = value;
  if (text.size() > size && mark == Mark::kYes) {
    text.resize(size);
    text[size - 1] = '+';  // Slurm marks a cut value
  }
  return PadField(text, static_cast<int>(size), width < 0 ? Justify::kLeft : Justify::kRight,
                  Cut::kYes) +
         " ";
}

std::string Join(const std::vector<SacctField>& fields, SacctLayout layout, Mark mark,
                 const std::function<std::string(const SacctField&)>& text) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string value = text(fields[i]);
    switch (layout) {
      case SacctLayout::kColumns:
        line += Cell(value, fields[i].width, mark);
        break;
      case SacctLayout::kParsable:
        line += value + "|";
        break;
      case SacctLayout::kParsableNoEnd:
        line += value + (i + 1 < fields.size() ? "|" : "");
        break;
    }
  }
  return line + "\n";
}

}  // namespace

Result<std::vector<SacctField>> ParseSacctFormat(const std::string& format) {
  std::vector<SacctField> fields;
  size_t start = 0;
  while (start <= format.size()) {
    size_t end = format.find(',', start);
    if (end == std::string::npos) end = format.size();
    std::string token = format.substr(start, end - start);
    start = end + 1;
    if (token.empty()) continue;
    std::optional<int> width;
    if (const size_t percent = token.find('%'); percent != std::string::npos) {
      width = std::atoi(token.c_str() + percent + 1);
      token.resize(percent);
    }
    const auto& table = Fields();
    size_t i = 0;
    while (i < table.size() && strcasecmp(table[i].name, token.c_str()) != 0) ++i;
    if (i == table.size()) {
      return InvalidArgument("Invalid field requested: \"" + token + "\"");
    }
    // "%N" replaces the width and its side: N right-justifies, -N left.
    SacctField field{static_cast<int>(i), table[i].width};
    if (width && *width != 0) field.width = *width;
    fields.push_back(field);
  }
  return fields;
}

bool IsNamedBy(const SlurmJob& job, const std::string& id) {
  if (id.find('_') != std::string::npos) return job.array_id == id;
  const std::string array = std::to_string(job.array_parent.value_or(job.id));
  return std::to_string(job.id) == id || (job.array_index && array == id);
}

Result<SacctJobWord> ParseSacctJobWord(const std::string& word) {
  SacctJobWord parsed;
  const size_t dot = word.find('.');
  parsed.job = word.substr(0, dot);
  if (dot != std::string::npos) parsed.step = word.substr(dot + 1);
  auto number = [](std::string_view digits) {
    return !digits.empty() && digits.size() <= 18 &&
           std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  const size_t underscore = parsed.job.find('_');
  const bool job_ok = number(std::string_view(parsed.job).substr(0, underscore)) &&
                      (underscore == std::string::npos ||
                       number(std::string_view(parsed.job).substr(underscore + 1)));
  const bool step_ok = !parsed.step || *parsed.step == "batch" || number(*parsed.step);
  if (!job_ok || !step_ok || parsed.job.front() == '0') {
    return InvalidArgument("Invalid job id: " + word);
  }
  return parsed;
}

std::string SacctHeader(const std::vector<SacctField>& fields, SacctLayout layout) {
  std::string out = Join(fields, layout, Mark::kNo, [](const SacctField& field) {
    return std::string(Fields()[static_cast<size_t>(field.index)].name);
  });
  if (layout != SacctLayout::kColumns) return out;
  for (const SacctField& field : fields) {
    out += std::string(static_cast<size_t>(std::abs(field.width)), '-') + " ";
  }
  return out + "\n";
}

std::string SacctLine(const std::vector<SacctField>& fields, SacctLayout layout,
                      const SlurmJob& job, core::Time now, const std::string& canceller_uid) {
  const Context context{now, canceller_uid};
  return Join(fields, layout, Mark::kYes, [&](const SacctField& field) {
    return Fields()[static_cast<size_t>(field.index)].value(job, context);
  });
}

std::string SacctStepLine(const std::vector<SacctField>& fields, SacctLayout layout,
                          const SlurmJob& job, const SacctStep& step, core::Time now) {
  return Join(fields, layout, Mark::kYes, [&](const SacctField& field) {
    const StepValue& value = Fields()[static_cast<size_t>(field.index)].step;
    return value ? value(job, step, now) : std::string();
  });
}

std::optional<SacctStep> BatchStep(const SlurmJob& job) {
  if (!job.batch || !job.start_time || job.IsPending() || job.nodes.empty()) return std::nullopt;
  SacctStep step;
  step.suffix = "batch";
  step.name = "batch";
  step.start_time = job.start_time;
  step.end_time = job.end_time;
  step.nodes = {job.nodes.front()};
  ShareOn(job, step);
  if (job.IsRunning()) {
    step.state = "RUNNING";
    step.exit_code = "0:0";
    return step;
  }
  // The script's own outcome, "code:signal": a signal (a cancel, the time
  // limit, kill -9) ends it CANCELLED, whatever the job's state says.
  step.exit_code = job.exit_code.empty() ? "0:0" : job.exit_code;
  const size_t colon = step.exit_code.find(':');
  const bool signalled = colon != std::string::npos && step.exit_code.substr(colon + 1) != "0";
  const bool failed = step.exit_code.substr(0, colon) != "0";
  step.state = signalled ? "CANCELLED" : failed ? "FAILED" : "COMPLETED";
  if (job.state == "OUT_OF_MEMORY") step.state = job.state;  // the script was the one killed
  return step;
}

SacctStep StepFromJson(const SlurmJob& job, const nlohmann::json& json) {
  SacctStep step;
  step.suffix = std::to_string(json.value("step", int64_t{0}));
  if (const auto it = json.find("command");
      it != json.end() && it->is_array() && !it->empty() && (*it)[0].is_string()) {
    const std::string program = (*it)[0].get<std::string>();
    step.name = program.substr(program.rfind('/') + 1);  // as Slurm names it
  }
  step.start_time = JsonTime(json.value("start_time", nlohmann::json()));
  step.end_time = JsonTime(json.value("end_time", nlohmann::json()));
  step.nodes = json.value("nodes", std::vector<std::string>{});
  const nlohmann::json tasks = json.value("tasks", nlohmann::json::array());
  step.tasks = static_cast<int64_t>(tasks.size());
  ShareOn(job, step);
  // Slurm's step exit code: the highest of its tasks', or the signal one
  // was killed with (CANCELLED, as a signalled batch script).
  int64_t code = 0;
  int64_t signal = 0;
  for (const nlohmann::json& task : tasks) {
    if (task.value("signal", nlohmann::json()).is_number_integer()) {
      signal = std::max(signal, task["signal"].get<int64_t>());
    }
    if (task.value("exit_code", nlohmann::json()).is_number_integer()) {
      code = std::max(code, task["exit_code"].get<int64_t>());
    }
  }
  const std::string state = json.value("state", "");
  if (state == "running") {
    step.state = "RUNNING";
    step.exit_code = "0:0";
  } else if (state == "cancelled" || signal != 0) {
    step.state = "CANCELLED";
    step.exit_code = std::to_string(signal == 0 ? code : 0) + ":" + std::to_string(signal);
  } else {
    step.state = code != 0 ? "FAILED" : "COMPLETED";
    step.exit_code = std::to_string(code) + ":0";
  }
  return step;
}

}  // namespace berth::cli::slurm
