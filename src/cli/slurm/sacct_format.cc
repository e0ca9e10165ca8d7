#include "cli/slurm/sacct_format.h"

#include <strings.h>

#include <algorithm>
#include <cstdlib>
#include <functional>

#include "cli/slurm/slurm_text.h"

namespace berth::cli::slurm {
namespace {

struct Context {
  core::Time now;
  const std::string& canceller_uid;
};

struct FieldDef {
  int width;  // Slurm's default; negative: left-justified
  const char* name;
  std::function<std::string(const SlurmJob&, const Context&)> value;
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
  const int64_t gpus = job.gpus_per_task * job.tasks;
  if (gpus > 0) tres += ",gres/gpu=" + std::to_string(gpus);
  if (job.memory_mib > 0) tres += ",mem=" + SlurmMemory(job.memory_mib * job.tasks);
  return tres + ",node=" + std::to_string(job.NodeCount());
}

std::string State(const SlurmJob& job, const Context& context) {
  if (job.state == "CANCELLED" && !context.canceller_uid.empty()) {
    return "CANCELLED by " + context.canceller_uid;
  }
  return job.state;
}

const std::vector<FieldDef>& Fields() {
  static const std::vector<FieldDef> fields = {
      {-12, "JobID", [](auto& j, auto&) { return j.array_id; }},
      {-12, "JobIDRaw", [](auto& j, auto&) { return std::to_string(j.id); }},
      {10, "JobName", [](auto& j, auto&) { return j.name; }},
      {10, "State", State},
      {8, "ExitCode", [](auto& j, auto&) { return ExitCode(j); }},
      {10, "Elapsed",
       [](auto& j, const Context& c) { return SlurmElapsed(j.ElapsedSeconds(c.now)); }},
      {10, "ElapsedRaw",
       [](auto& j, const Context& c) { return std::to_string(j.ElapsedSeconds(c.now)); }},
      {19, "Submit", [](auto& j, auto&) { return SlurmTime(j.submit_time); }},
      {19, "Start", [](auto& j, auto&) { return Start(j); }},
      {19, "End", [](auto& j, auto&) { return DateOrUnknown(j.end_time); }},
      {10, "AllocTRES", [](auto& j, auto&) { return AllocTres(j); }},
      {15, "NodeList",
       [](auto& j, auto&) {
         return j.nodes.empty() ? std::string("None assigned") : CompressHostlist(j.nodes);
       }},
      // A queue is Berth's account, as sacctmgr shows a user's (sacctmgr_format.h).
      {10, "Account", [](auto& j, auto&) { return j.partition; }},
      {10, "Partition", [](auto& j, auto&) { return j.partition; }},
      // What it holds, or would: Slurm shows a pending job's CPUs too.
      {10, "AllocCPUS", [](auto& j, auto&) { return std::to_string(j.cpus); }},
      {8, "NNodes", [](auto& j, auto&) { return std::to_string(j.NodeCount()); }},
      {8, "NTasks", [](auto& j, auto&) { return std::to_string(j.tasks); }},
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

}  // namespace berth::cli::slurm
